// Checks a healthagents decision with nothing but an Ethereum JSON-RPC
// endpoint, ethers and iden3's Poseidon: no Go, no call to our service.
// docs/verify.md walks through every step.
//
//   node verify.mjs --rpc URL --registry ADDRESS --tx HASH [--statement FILE]
//
// Prints one line per check and exits 1 if any fails.
import { readFileSync } from "node:fs";
import { ethers } from "ethers";
import { poseidon } from "@iden3/js-crypto";

const REGISTRY_ABI = [
  "function record(uint256 circuitId, uint256[8] proof, uint256[] publicInputs)",
  "function verifierOf(uint256 circuitId) view returns (address)",
  "function issuers(uint256 issuerKeyHash) view returns (uint64 registeredAt, uint64 retiredAt, address admin)",
  "function revokedIn(uint256 issuerKeyHash, uint64 nonce) view returns (uint256)",
  "event StatementRecorded(uint256 indexed digest, uint256 indexed issuerKeyHash, uint256 indexed circuitId, address verifier, address submitter)",
];
const VERIFIER_ABI = ["function verifyProof(uint256[8] proof, uint256[] input) view returns (bool)"];

function args() {
  const a = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) a[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const k of ["rpc", "registry", "tx"]) if (!a[k]) throw new Error(`--${k} is required`);
  return a;
}

const hex32 = (x) => "0x" + BigInt(x).toString(16).padStart(64, "0");
let failed = false;
function check(name, ok, detail) {
  console.log(`${ok ? "ok  " : "FAIL"} ${name.padEnd(13)} ${detail}`);
  if (!ok) failed = true;
  return ok;
}

// digestOf recomputes a statement's digest from its opening with iden3's
// Poseidon: docs/statement.md gives the layout (fields in order, hashed in
// chunks of at most 16, then the chunk hashes together).
export function digestOf(opening) {
  const fields = opening.fields.map((f) => BigInt(f.value));
  if (fields.length <= 16) return poseidon.hash(fields);
  const chunks = [];
  for (let i = 0; i < fields.length; i += 16) chunks.push(poseidon.hash(fields.slice(i, i + 16)));
  return poseidon.hash(chunks);
}

async function main() {
  const a = args();
  const provider = new ethers.JsonRpcProvider(a.rpc, undefined, { staticNetwork: true });
  const registryAddr = ethers.getAddress(a.registry);
  const registry = new ethers.Contract(registryAddr, REGISTRY_ABI, provider);

  // 1. The transaction was mined and succeeded, and it called our registry.
  const receipt = await provider.getTransactionReceipt(a.tx);
  if (!check("receipt", receipt !== null && receipt.status === 1,
    receipt ? `mined in block ${receipt.blockNumber}, status ${receipt.status}` : `transaction ${a.tx} not found`)) return;
  const block = receipt.blockNumber;
  const tx = await provider.getTransaction(a.tx);
  if (!check("registry", tx.to !== null && ethers.getAddress(tx.to) === registryAddr,
    `transaction sent to ${tx.to}, expected registry ${registryAddr}`)) return;

  // 2. The registry emitted StatementRecorded (logs from other addresses ignored).
  let ev = null;
  for (const log of receipt.logs) {
    if (ethers.getAddress(log.address) !== registryAddr) continue;
    const parsed = registry.interface.parseLog(log);
    if (parsed && parsed.name === "StatementRecorded") ev = parsed.args;
  }
  if (!check("event", ev !== null, ev ? `StatementRecorded digest ${hex32(ev.digest)} issuer ${hex32(ev.issuerKeyHash)} circuit ${hex32(ev.circuitId)}`
    : "no StatementRecorded event from the registry")) return;

  // 3. The call's public inputs are exactly [issuerKeyHash, digest, circuitId].
  let call = null;
  try { call = registry.interface.decodeFunctionData("record", tx.data); } catch { /* not a record call */ }
  const inputs = call ? call.publicInputs.map(BigInt) : [];
  if (!check("inputs", call !== null && inputs.length === 3 && inputs[0] === ev.issuerKeyHash &&
    inputs[1] === ev.digest && inputs[2] === ev.circuitId && call.circuitId === ev.circuitId,
    "public inputs [issuerKeyHash, digest, circuitId] of the call equal the event's")) return;

  // 4. The verifier bound to the circuit at that block, and its answer, re-run.
  const verifier = await registry.verifierOf(ev.circuitId, { blockTag: block });
  if (!check("verifier", verifier === ev.verifier, `circuit ${hex32(ev.circuitId)} is bound to ${verifier} at block ${block}`)) return;
  const v = new ethers.Contract(verifier, VERIFIER_ABI, provider);
  const ok = await v.verifyProof([...call.proof], [...call.publicInputs], { blockTag: block });
  check("proof", ok, `Groth16 verification re-run by eth_call at block ${block}: ${ok ? "accepted" : "REJECTED"}`);

  // 5. The issuer (payer key) was registered and not retired at that block.
  const iss = await registry.issuers(ev.issuerKeyHash);
  const active = iss.registeredAt !== 0n && iss.registeredAt <= block && (iss.retiredAt === 0n || block < iss.retiredAt);
  check("issuer", active, `issuer ${hex32(ev.issuerKeyHash)} registered in block ${iss.registeredAt}, retired ${iss.retiredAt || "never"}`);

  // 6. Given the statement the caller was handed: the digest from its opening.
  if (a.statement) {
    const st = JSON.parse(readFileSync(a.statement, "utf8"));
    const d = digestOf(st.opening);
    check("statement", d === ev.digest, `digest recomputed from the opening ${d === ev.digest ? "equals" : "differs from"} the recorded digest`);
    // The nonce is the opening's committed "revocation_nonce" field, a
    // decimal string: JSON.parse rounds the plain revocation_nonce number
    // (19 digits, above 2^53) and would look up another nonce.
    const field = (st.opening.fields || []).find((f) => f.name === "revocation_nonce");
    if (field !== undefined || st.opening.revocation_nonce !== undefined) {
      const nonce = field !== undefined ? BigInt(field.value) : BigInt(st.opening.revocation_nonce);
      const at = await registry.revokedIn(ev.issuerKeyHash, nonce);
      check("revocation", at === 0n || at > BigInt(block), at === 0n ? "credential nonce not revoked" : `credential nonce revoked in block ${at}`);
    }
  }
}

main().then(() => process.exit(failed ? 1 : 0), (err) => { console.error(err.message); process.exit(2); });
