// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

/// @notice The verifier interface the registry calls (Groth16Verifier implements it).
interface IProofVerifier {
    function verifyProof(uint256[8] calldata proof, uint256[] calldata input) external view returns (bool);
}

/// @title StatementRegistry
/// @notice Maps a statement kind to the verifier of its circuit, verifies proofs
/// through it and records each verified statement.
/// @dev A rejected proof does not revert: verifyAndRecord returns false and
/// emits nothing, so a mined transaction with status 1 and no StatementVerified
/// log is a rejection, and a revert always means a caller or set-up error
/// (unknown kind), never a bad proof.
contract StatementRegistry {
    /// @notice The account allowed to register verifiers.
    address public owner;

    /// @notice The verifier contract registered for each statement kind.
    mapping(bytes32 kind => address verifier) public verifierOf;

    /// @notice The block in which a statement (kind, inputsHash) was first verified, 0 if never.
    mapping(bytes32 kind => mapping(bytes32 inputsHash => uint256 blockNumber)) public verifiedIn;

    event OwnershipTransferred(address indexed previousOwner, address indexed newOwner);
    event VerifierRegistered(bytes32 indexed kind, address indexed verifier);
    /// @notice A proof for `kind` over `inputs` was verified; inputsHash = keccak256(abi.encodePacked(inputs)).
    event StatementVerified(bytes32 indexed kind, bytes32 indexed inputsHash, address indexed submitter, uint256[] inputs);

    error NotOwner();
    error NotAContract(address account);
    error ZeroAddress();
    error UnknownKind(bytes32 kind);

    constructor() {
        owner = msg.sender;
        emit OwnershipTransferred(address(0), msg.sender);
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    /// @notice Hands the registry to another owner.
    function transferOwnership(address newOwner) external onlyOwner {
        if (newOwner == address(0)) revert ZeroAddress();
        emit OwnershipTransferred(owner, newOwner);
        owner = newOwner;
    }

    /// @notice Registers (or replaces) the verifier for a statement kind.
    function register(bytes32 kind, address verifier) external onlyOwner {
        if (verifier.code.length == 0) revert NotAContract(verifier);
        verifierOf[kind] = verifier;
        emit VerifierRegistered(kind, verifier);
    }

    /// @notice Verifies a proof without recording it. Reverts only for an unknown kind.
    function check(bytes32 kind, uint256[8] calldata proof, uint256[] calldata inputs) public view returns (bool) {
        address verifier = verifierOf[kind];
        if (verifier == address(0)) revert UnknownKind(kind);
        (bool ok, bytes memory ret) =
            verifier.staticcall(abi.encodeCall(IProofVerifier.verifyProof, (proof, inputs)));
        return ok && ret.length == 32 && abi.decode(ret, (uint256)) == 1;
    }

    /// @notice Verifies a proof and, when valid, records the statement and emits StatementVerified.
    /// @return true when the proof was valid and recorded; false (nothing recorded) when rejected.
    function verifyAndRecord(bytes32 kind, uint256[8] calldata proof, uint256[] calldata inputs)
        external
        returns (bool)
    {
        if (!check(kind, proof, inputs)) return false;
        bytes32 inputsHash = keccak256(abi.encodePacked(inputs));
        if (verifiedIn[kind][inputsHash] == 0) verifiedIn[kind][inputsHash] = block.number;
        emit StatementVerified(kind, inputsHash, msg.sender, inputs);
        return true;
    }
}
