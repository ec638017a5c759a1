// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

/// @title Groth16Verifier
/// @notice A generic Groth16 verifier over BN254 (alt_bn128). The verifying key
/// is supplied at deploy time, so this one bytecode serves every circuit.
/// @dev G2 points are given as (x.imaginary, x.real, y.imaginary, y.real), the
/// order the 0x08 precompile expects. A proof is
/// [A.x, A.y, B.x.im, B.x.re, B.y.im, B.y.re, C.x, C.y].
/// verifyProof never reverts on bad data: an invalid proof, a public input not
/// below the scalar field order, a coordinate not below the base field order,
/// a point off its curve, or a precompile failure all return false.
contract Groth16Verifier {
    /// @dev BN254 base field modulus.
    uint256 internal constant P = 21888242871839275222246405745257275088696311157297823662689037894645226208583;
    /// @dev BN254 scalar field modulus (the group order r).
    uint256 internal constant R = 21888242871839275222246405745257275088548364400416034343698204186575808495617;
    /// @dev b' = 3 / (9 + u), the constant of the twist y^2 = x^3 + b' that holds G2.
    uint256 internal constant TWIST_B_RE = 19485874751759354771024239261021720505790618469301721065564631296452457478373;
    uint256 internal constant TWIST_B_IM = 266929791119991161246907387137283842545076965332900288569378510910307636690;

    uint256 internal immutable ALPHA_X;
    uint256 internal immutable ALPHA_Y;
    uint256 internal immutable BETA_X_IM;
    uint256 internal immutable BETA_X_RE;
    uint256 internal immutable BETA_Y_IM;
    uint256 internal immutable BETA_Y_RE;
    uint256 internal immutable GAMMA_X_IM;
    uint256 internal immutable GAMMA_X_RE;
    uint256 internal immutable GAMMA_Y_IM;
    uint256 internal immutable GAMMA_Y_RE;
    uint256 internal immutable DELTA_X_IM;
    uint256 internal immutable DELTA_X_RE;
    uint256 internal immutable DELTA_Y_IM;
    uint256 internal immutable DELTA_Y_RE;

    /// @notice keccak256 of the ABI-encoded constructor arguments: identifies the verifying key.
    bytes32 public immutable verifyingKeyHash;

    /// @dev IC points flattened as [x0, y0, x1, y1, ...]; IC[0] is the constant term.
    uint256[] internal ic;

    error InvalidVerifyingKey();

    /// @param alpha1 alpha in G1 as (x, y).
    /// @param beta2 beta in G2, imaginary parts first.
    /// @param gamma2 gamma in G2, imaginary parts first.
    /// @param delta2 delta in G2, imaginary parts first.
    /// @param icPoints the IC points flattened as [x0, y0, x1, y1, ...], one more point than public inputs.
    constructor(
        uint256[2] memory alpha1,
        uint256[4] memory beta2,
        uint256[4] memory gamma2,
        uint256[4] memory delta2,
        uint256[] memory icPoints
    ) {
        if (icPoints.length < 2 || icPoints.length % 2 != 0) revert InvalidVerifyingKey();
        if (!_onG1(alpha1[0], alpha1[1])) revert InvalidVerifyingKey();
        if (!_onG2(beta2[0], beta2[1], beta2[2], beta2[3])) revert InvalidVerifyingKey();
        if (!_onG2(gamma2[0], gamma2[1], gamma2[2], gamma2[3])) revert InvalidVerifyingKey();
        if (!_onG2(delta2[0], delta2[1], delta2[2], delta2[3])) revert InvalidVerifyingKey();
        for (uint256 i = 0; i < icPoints.length; i += 2) {
            // The point at infinity (0, 0) is a legal IC entry.
            if ((icPoints[i] != 0 || icPoints[i + 1] != 0) && !_onG1(icPoints[i], icPoints[i + 1])) {
                revert InvalidVerifyingKey();
            }
        }
        ALPHA_X = alpha1[0];
        ALPHA_Y = alpha1[1];
        BETA_X_IM = beta2[0];
        BETA_X_RE = beta2[1];
        BETA_Y_IM = beta2[2];
        BETA_Y_RE = beta2[3];
        GAMMA_X_IM = gamma2[0];
        GAMMA_X_RE = gamma2[1];
        GAMMA_Y_IM = gamma2[2];
        GAMMA_Y_RE = gamma2[3];
        DELTA_X_IM = delta2[0];
        DELTA_X_RE = delta2[1];
        DELTA_Y_IM = delta2[2];
        DELTA_Y_RE = delta2[3];
        ic = icPoints;
        verifyingKeyHash = keccak256(abi.encode(alpha1, beta2, gamma2, delta2, icPoints));
    }

    /// @notice The number of public inputs a proof for this key carries.
    function publicInputCount() external view returns (uint256) {
        return ic.length / 2 - 1;
    }

    /// @notice Checks a Groth16 proof against this contract's verifying key.
    /// @return true when the proof is valid for the inputs; false otherwise, never a revert.
    function verifyProof(uint256[8] calldata proof, uint256[] calldata input) external view returns (bool) {
        if (input.length + 1 != ic.length / 2) return false;
        for (uint256 i = 0; i < 8; i++) {
            if (proof[i] >= P) return false;
        }
        if (!_onG1(proof[0], proof[1]) || !_onG1(proof[6], proof[7])) return false;
        if (!_onG2(proof[2], proof[3], proof[4], proof[5])) return false;
        (bool ok, uint256 x, uint256 y) = _publicInputPoint(input);
        if (!ok) return false;
        return _pairingCheck(proof, x, y);
    }

    /// @dev vk_x = IC[0] + sum(input[i] * IC[i+1]) with the 0x07 and 0x06 precompiles.
    function _publicInputPoint(uint256[] calldata input) internal view returns (bool, uint256, uint256) {
        uint256[4] memory buf;
        uint256 x = ic[0];
        uint256 y = ic[1];
        for (uint256 i = 0; i < input.length; i++) {
            uint256 s = input[i];
            if (s >= R) return (false, 0, 0);
            if (s == 0) continue;
            buf[0] = ic[2 * i + 2];
            buf[1] = ic[2 * i + 3];
            buf[2] = s;
            bool success;
            assembly ("memory-safe") {
                // Yul evaluates arguments right to left: call first, then read returndatasize.
                success := staticcall(gas(), 0x07, buf, 0x60, buf, 0x40)
                success := and(success, eq(returndatasize(), 0x40))
            }
            if (!success) return (false, 0, 0);
            buf[2] = x;
            buf[3] = y;
            assembly ("memory-safe") {
                success := staticcall(gas(), 0x06, buf, 0x80, buf, 0x40)
                success := and(success, eq(returndatasize(), 0x40))
            }
            if (!success) return (false, 0, 0);
            x = buf[0];
            y = buf[1];
        }
        return (true, x, y);
    }

    /// @dev e(-A, B) * e(alpha, beta) * e(vk_x, gamma) * e(C, delta) == 1 with the 0x08 precompile.
    function _pairingCheck(uint256[8] calldata proof, uint256 x, uint256 y) internal view returns (bool) {
        uint256[24] memory input;
        input[0] = proof[0];
        input[1] = proof[1] == 0 ? 0 : P - proof[1];
        input[2] = proof[2];
        input[3] = proof[3];
        input[4] = proof[4];
        input[5] = proof[5];
        input[6] = ALPHA_X;
        input[7] = ALPHA_Y;
        input[8] = BETA_X_IM;
        input[9] = BETA_X_RE;
        input[10] = BETA_Y_IM;
        input[11] = BETA_Y_RE;
        input[12] = x;
        input[13] = y;
        input[14] = GAMMA_X_IM;
        input[15] = GAMMA_X_RE;
        input[16] = GAMMA_Y_IM;
        input[17] = GAMMA_Y_RE;
        input[18] = proof[6];
        input[19] = proof[7];
        input[20] = DELTA_X_IM;
        input[21] = DELTA_X_RE;
        input[22] = DELTA_Y_IM;
        input[23] = DELTA_Y_RE;
        uint256[1] memory out;
        bool success;
        assembly ("memory-safe") {
            success := staticcall(gas(), 0x08, input, 0x300, out, 0x20)
            success := and(success, eq(returndatasize(), 0x20))
        }
        return success && out[0] == 1;
    }

    /// @dev y^2 == x^3 + 3 over the base field; coordinates must already be below P.
    function _onG1(uint256 x, uint256 y) internal pure returns (bool) {
        if (x >= P || y >= P) return false;
        return mulmod(y, y, P) == addmod(mulmod(mulmod(x, x, P), x, P), 3, P);
    }

    /// @dev y^2 == x^3 + b' over Fp2 = Fp[u]/(u^2 + 1). Checks the curve, not the
    /// subgroup: a point off the subgroup makes the pairing precompile fail.
    function _onG2(uint256 xIm, uint256 xRe, uint256 yIm, uint256 yRe) internal pure returns (bool) {
        if (xIm >= P || xRe >= P || yIm >= P || yRe >= P) return false;
        // y^2
        uint256 lRe = addmod(mulmod(yRe, yRe, P), P - mulmod(yIm, yIm, P), P);
        uint256 lIm = mulmod(addmod(yRe, yRe, P), yIm, P);
        // x^2
        uint256 sRe = addmod(mulmod(xRe, xRe, P), P - mulmod(xIm, xIm, P), P);
        uint256 sIm = mulmod(addmod(xRe, xRe, P), xIm, P);
        // x^3 + b'
        uint256 rRe = addmod(addmod(mulmod(sRe, xRe, P), P - mulmod(sIm, xIm, P), P), TWIST_B_RE, P);
        uint256 rIm = addmod(addmod(mulmod(sRe, xIm, P), mulmod(sIm, xRe, P), P), TWIST_B_IM, P);
        return lRe == rRe && lIm == rIm;
    }
}
