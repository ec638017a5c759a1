// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

/// @notice The verifier interface the registry calls (Groth16Verifier implements it).
interface IStatementVerifier {
    function verifyProof(uint256[8] calldata proof, uint256[] calldata input) external view returns (bool);
}

/// @title GovernedRegistry
/// @notice Records verified statements whose public inputs are exactly
/// [issuerKeyHash, statementDigest, circuitId]. Governance: one owner (a cold
/// wallet, set at deploy) registers and retires submitters and issuers and adds
/// circuits; verifiers are immutable per circuit id (no replace function); only
/// registered submitters record; a proof that fails verification reverts.
/// Batches: a submitter may instead record the Poseidon Merkle root of many
/// statements whose proofs it verified against the verifiers bound to their
/// circuit ids (recordBatch); anyone re-verifies each one with eth_call from
/// the statement, its Merkle path and its proof (docs/statement.md, "Batches").
/// @dev An issuer may name an admin address (the payer's own key) that can revoke
/// that issuer's credential nonces, so a payer does not depend on us to revoke.
contract GovernedRegistry {
    struct Issuer {
        uint64 registeredAt; // block of registration, 0 = never registered
        uint64 retiredAt; // block of retirement, 0 = active
        address admin; // may revoke this issuer's nonces besides the owner; 0 = owner only
    }

    /// @notice The governing account (cold wallet).
    address public immutable owner;

    mapping(address submitter => bool) public isSubmitter;
    mapping(uint256 issuerKeyHash => Issuer) public issuers;
    mapping(uint256 circuitId => address verifier) public verifierOf;
    /// @notice Block in which (issuer, nonce) was revoked, 0 if not revoked.
    mapping(uint256 issuerKeyHash => mapping(uint64 nonce => uint256 blockNumber)) public revokedIn;
    /// @notice Block in which a batch root was recorded, 0 if never.
    mapping(uint256 root => uint256 blockNumber) public batchRecordedIn;

    /// @notice The most statements one batch anchors (a Merkle tree of depth 10).
    uint256 public constant MAX_BATCH = 1024;
    /// @notice BN254's scalar field, where Poseidon roots live.
    uint256 internal constant SNARK_SCALAR_FIELD =
        21888242871839275222246405745257275088548364400416034343698204186575808495617;

    event SubmitterSet(address indexed submitter, bool registered);
    event IssuerRegistered(uint256 indexed issuerKeyHash, address admin);
    event IssuerRetired(uint256 indexed issuerKeyHash);
    event NonceRevoked(uint256 indexed issuerKeyHash, uint64 indexed nonce);
    event CircuitAdded(uint256 indexed circuitId, address indexed verifier);
    /// @notice The only statement event: a hiding digest and who/what vouches for it.
    event StatementRecorded(
        uint256 indexed digest,
        uint256 indexed issuerKeyHash,
        uint256 indexed circuitId,
        address verifier,
        address submitter
    );

    /// @notice A batch of statements: the Poseidon Merkle root of their leaves
    /// Poseidon(issuerKeyHash, digest, circuitId), how many there are and the
    /// circuit ids among them (strictly increasing, each bound to a verifier).
    event BatchRecorded(uint256 indexed root, uint256 size, uint256[] circuitIds, address indexed submitter);

    error NotOwner();
    error NotSubmitter(address account);
    error NotIssuerAdmin(address account);
    error ZeroAddress();
    error NotAContract(address account);
    error CircuitExists(uint256 circuitId);
    error UnknownCircuit(uint256 circuitId);
    error IssuerExists(uint256 issuerKeyHash);
    error IssuerNotActive(uint256 issuerKeyHash);
    error BadPublicInputs();
    error ProofRejected();
    error BadBatch();
    error BatchExists(uint256 root);

    constructor(address owner_) {
        if (owner_ == address(0)) revert ZeroAddress();
        owner = owner_;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    function setSubmitter(address submitter, bool registered) external onlyOwner {
        if (submitter == address(0)) revert ZeroAddress();
        isSubmitter[submitter] = registered;
        emit SubmitterSet(submitter, registered);
    }

    /// @notice Registers an issuer once; a retired issuer cannot come back (its history stays exact).
    function registerIssuer(uint256 issuerKeyHash, address admin) external onlyOwner {
        if (issuers[issuerKeyHash].registeredAt != 0) revert IssuerExists(issuerKeyHash);
        issuers[issuerKeyHash] = Issuer(uint64(block.number), 0, admin);
        emit IssuerRegistered(issuerKeyHash, admin);
    }

    function retireIssuer(uint256 issuerKeyHash) external onlyOwner {
        Issuer storage iss = issuers[issuerKeyHash];
        if (iss.registeredAt == 0 || iss.retiredAt != 0) revert IssuerNotActive(issuerKeyHash);
        iss.retiredAt = uint64(block.number);
        emit IssuerRetired(issuerKeyHash);
    }

    /// @notice Revokes a credential nonce; by the owner or the issuer's admin.
    function revokeNonce(uint256 issuerKeyHash, uint64 nonce) external {
        Issuer storage iss = issuers[issuerKeyHash];
        if (msg.sender != owner && (iss.admin == address(0) || msg.sender != iss.admin)) {
            revert NotIssuerAdmin(msg.sender);
        }
        if (revokedIn[issuerKeyHash][nonce] == 0) {
            revokedIn[issuerKeyHash][nonce] = block.number;
            emit NonceRevoked(issuerKeyHash, nonce);
        }
    }

    /// @notice Binds a verifier to a new circuit id, once; there is no replace.
    function addCircuit(uint256 circuitId, address verifier) external onlyOwner {
        if (verifierOf[circuitId] != address(0)) revert CircuitExists(circuitId);
        if (verifier.code.length == 0) revert NotAContract(verifier);
        verifierOf[circuitId] = verifier;
        emit CircuitAdded(circuitId, verifier);
    }

    /// @notice True when the issuer was registered and not retired at `blockNumber`.
    function isIssuerActiveAt(uint256 issuerKeyHash, uint256 blockNumber) public view returns (bool) {
        Issuer memory iss = issuers[issuerKeyHash];
        return iss.registeredAt != 0 && iss.registeredAt <= blockNumber
            && (iss.retiredAt == 0 || blockNumber < iss.retiredAt);
    }

    function isRevoked(uint256 issuerKeyHash, uint64 nonce) external view returns (bool) {
        return revokedIn[issuerKeyHash][nonce] != 0;
    }

    /// @notice Verifies and records one statement; reverts on any failure, so no event means no record.
    function record(uint256 circuitId, uint256[8] calldata proof, uint256[] calldata publicInputs) external {
        if (!isSubmitter[msg.sender]) revert NotSubmitter(msg.sender);
        if (publicInputs.length != 3 || publicInputs[2] != circuitId) revert BadPublicInputs();
        address verifier = verifierOf[circuitId];
        if (verifier == address(0)) revert UnknownCircuit(circuitId);
        if (!isIssuerActiveAt(publicInputs[0], block.number)) revert IssuerNotActive(publicInputs[0]);
        (bool ok, bytes memory ret) =
            verifier.staticcall(abi.encodeCall(IStatementVerifier.verifyProof, (proof, publicInputs)));
        if (!ok || ret.length != 32 || abi.decode(ret, (uint256)) != 1) revert ProofRejected();
        emit StatementRecorded(publicInputs[1], publicInputs[0], circuitId, verifier, msg.sender);
    }

    /// @notice Records a batch's Merkle root once. The submitter verified every
    /// statement's proof against the verifier bound to its circuit id before
    /// sending; the registry checks what it can without the leaves: the
    /// submitter, the batch's shape, and that every circuit id is bound.
    function recordBatch(uint256 root, uint256 size, uint256[] calldata circuitIds) external {
        if (!isSubmitter[msg.sender]) revert NotSubmitter(msg.sender);
        if (root == 0 || root >= SNARK_SCALAR_FIELD || size == 0 || size > MAX_BATCH) revert BadBatch();
        if (circuitIds.length == 0 || circuitIds.length > size) revert BadBatch();
        for (uint256 i = 0; i < circuitIds.length; i++) {
            if (i > 0 && circuitIds[i] <= circuitIds[i - 1]) revert BadBatch();
            if (verifierOf[circuitIds[i]] == address(0)) revert UnknownCircuit(circuitIds[i]);
        }
        if (batchRecordedIn[root] != 0) revert BatchExists(root);
        batchRecordedIn[root] = block.number;
        emit BatchRecorded(root, size, circuitIds, msg.sender);
    }
}
