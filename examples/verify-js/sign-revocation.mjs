// A payer's admin signs the revocation of one of its credential nonces with
// ethers alone (docs/credentials.md, "Revoking one credential"): the EIP-712
// message RevokeNonce{issuerKeyHash, nonce} in the registry's domain. The
// signature goes in admin_signature of
// POST /api/v1/issuers/{issuer_id}/revocations.
//
//   node sign-revocation.mjs --key ADMIN_PRIVATE_KEY --chain-id 1337 \
//     --registry 0x… --issuer-key-hash 1706… --nonce 7
//
// --chain-id and --registry come from GET /status (blockchain.chain_id,
// blockchain.registry); --issuer-key-hash from GET /api/v1/issuers/{id}
// (issuer_key_hash) or Poseidon(Ax, Ay) of the payer's key.
import { Wallet } from "ethers";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
for (const k of ["key", "chain-id", "registry", "issuer-key-hash", "nonce"]) {
  if (!args[k]) {
    console.error(`usage: node sign-revocation.mjs --key HEX --chain-id N --registry ADDRESS --issuer-key-hash N --nonce N (missing --${k})`);
    process.exit(2);
  }
}

const domain = {
  name: "healthagents GovernedRegistry",
  version: "1",
  chainId: BigInt(args["chain-id"]),
  verifyingContract: args.registry,
};
const types = { RevokeNonce: [{ name: "issuerKeyHash", type: "uint256" }, { name: "nonce", type: "uint64" }] };
// Decimal strings to BigInt: a nonce above 2^53 stays exact.
const message = { issuerKeyHash: BigInt(args["issuer-key-hash"]), nonce: BigInt(args.nonce) };
const signature = await new Wallet(args.key).signTypedData(domain, types, message);
console.log(signature);
