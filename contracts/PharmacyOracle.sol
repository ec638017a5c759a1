// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.28;

/// @title PharmacyOracle
/// @notice Pharmacy availability attestations: a writer (the service's account,
/// or another the owner allows) records that a pharmacy, named by its NPI,
/// expects to dispense a package, named by its 11-digit NDC, from a date on.
/// Prescription validation reads them back; nothing here is made up: an
/// unattested (pharmacy, NDC) reads as availableOn == 0.
contract PharmacyOracle {
    struct Availability {
        uint64 availableOn; // Unix seconds of the UTC day
        uint64 attestedAt; // block timestamp of the attestation
        address attester;
    }

    /// @notice The account that manages writers.
    address public immutable owner;

    /// @notice Accounts allowed to write attestations.
    mapping(address => bool) public writers;

    mapping(bytes32 => Availability) private byKey;

    /// @notice Emitted for every attestation written.
    event AvailabilityAttested(bytes32 indexed key, string pharmacyNPI, string ndc, uint64 availableOn, address attester);

    error NotWriter();
    error NotOwner();
    error BadInput();

    constructor() {
        owner = msg.sender;
        writers[msg.sender] = true;
    }

    /// @notice Allows or disallows a writer (owner only).
    function setWriter(address writer, bool allowed) external {
        if (msg.sender != owner) revert NotOwner();
        writers[writer] = allowed;
    }

    /// @notice The storage key of a (pharmacy, NDC) pair.
    function keyOf(string calldata pharmacyNPI, string calldata ndc) public pure returns (bytes32) {
        return keccak256(abi.encode(pharmacyNPI, ndc));
    }

    /// @notice Records that pharmacyNPI expects to dispense ndc from availableOn on,
    /// replacing any earlier attestation of the pair.
    function attest(string calldata pharmacyNPI, string calldata ndc, uint64 availableOn) external {
        if (!writers[msg.sender]) revert NotWriter();
        if (bytes(pharmacyNPI).length != 10 || bytes(ndc).length != 11 || availableOn == 0) revert BadInput();
        bytes32 key = keyOf(pharmacyNPI, ndc);
        byKey[key] = Availability(availableOn, uint64(block.timestamp), msg.sender);
        emit AvailabilityAttested(key, pharmacyNPI, ndc, availableOn, msg.sender);
    }

    /// @notice The attestation of a pair; availableOn is 0 when none exists.
    function availability(string calldata pharmacyNPI, string calldata ndc)
        external
        view
        returns (uint64 availableOn, uint64 attestedAt, address attester)
    {
        Availability memory a = byKey[keyOf(pharmacyNPI, ndc)];
        return (a.availableOn, a.attestedAt, a.attester);
    }
}
