// Checks a healthagents decision with nothing but an Ethereum JSON-RPC
// endpoint, ethers and iden3's Poseidon: no Go, no call to our service.
// docs/verify.md walks through every step; docs/statement.md says what binds
// each part of a statement.
//
//   node verify.mjs --rpc URL --registry ADDRESS --tx HASH --statement FILE [--proof FILE]
//
// Prints one line per check, the same lines as `healthagents verify-decision`.
// A decision anchored in a batch (a recordBatch transaction; its statement
// carries "batch") is checked from the BatchRecorded event, the statement's
// Merkle path and the answer's proof (proof_data, public_inputs: from the
// decision response given as --statement, or from --proof).
// Exit status: 0 every check passed, the statement's included; 1 a check
// failed (or the file is not a statement); 2 the check could not be run;
// 3 no --statement (or, for a batched decision, no proof): the transaction
// is a recorded decision, but not everything it states was checked.
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { ethers } from "ethers";
import { poseidon } from "@iden3/js-crypto";

const REGISTRY_ABI = [
  "function record(uint256 circuitId, uint256[8] proof, uint256[] publicInputs)",
  "function recordBatch(uint256 root, uint256 size, uint256[] circuitIds)",
  "function verifierOf(uint256 circuitId) view returns (address)",
  "function issuers(uint256 issuerKeyHash) view returns (uint64 registeredAt, uint64 retiredAt, address admin)",
  "function revokedIn(uint256 issuerKeyHash, uint64 nonce) view returns (uint256)",
  "event StatementRecorded(uint256 indexed digest, uint256 indexed issuerKeyHash, uint256 indexed circuitId, address verifier, address submitter)",
  "event BatchRecorded(uint256 indexed root, uint256 size, uint256[] circuitIds, address indexed submitter)",
];
const VERIFIER_ABI = ["function verifyProof(uint256[8] proof, uint256[] input) view returns (bool)"];

// BN254's scalar field: every value, digest and circuit id is below it.
const FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

// The statement schema of every circuit (name, id, fields in order, how each
// text renders, the public lists texts come from), generated from the Go
// circuits' own definitions; verify/js_test.go checks it is current.
const SCHEMAS = JSON.parse(readFileSync(new URL("./schema.json", import.meta.url), "utf8")).circuits;

function args() {
  const a = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i += 2) a[argv[i].replace(/^--/, "")] = argv[i + 1];
  for (const k of ["rpc", "registry", "tx"]) if (!a[k]) throw new Error(`--${k} is required`);
  return a;
}

const hex32 = (x) => (x === null || x === undefined ? "(none)" : "0x" + BigInt(x).toString(16).padStart(64, "0"));
const quote = (s) => JSON.stringify(s);
const is = (a, b) => (a !== null && a !== undefined && a === b ? "is" : "is not");
const equals = (a, b) => (a !== null && a !== undefined && a === b ? "equals" : "differs from");

const checks = [];
function check(name, ok, detail, unchecked = false) {
  console.log(`${ok ? "ok  " : "FAIL"} ${name.padEnd(13)} ${detail}`);
  checks.push({ name, ok, unchecked });
  return ok;
}

// digestOf recomputes a statement's digest from its values with iden3's
// Poseidon: docs/statement.md gives the layout (values in order, hashed in
// chunks of at most 16, then the chunk hashes together).
export function digestOf(values) {
  if (values.length <= 16) return poseidon.hash(values);
  const chunks = [];
  for (let i = 0; i < values.length; i += 16) chunks.push(poseidon.hash(values.slice(i, i + 16)));
  return poseidon.hash(chunks);
}

// readStatement reads a statement file, or a decision response holding one
// under "statement", as strictly as the Go checker: only the keys a statement
// has, every value a plain decimal field element. JSON.parse reads numbers as
// floats and would round the 19-digit revocation_nonce, so that one number is
// quoted before parsing (a key inside a JSON string is escaped, \", and does
// not match).
function readStatement(path) {
  const text = readFileSync(path, "utf8").replace(/("revocation_nonce"\s*:\s*)(-?[0-9][0-9.eE+-]*)/g, '$1"#number:$2"');
  let doc = JSON.parse(text);
  let fromResponse = false;
  if (doc && typeof doc.statement === "object" && doc.statement !== null && !Array.isArray(doc.statement)) {
    doc = doc.statement;
    fromResponse = true;
  }
  const keys = (o, allowed, where) => {
    if (typeof o !== "object" || o === null || Array.isArray(o)) throw new Error(`${where} is not an object`);
    for (const k of Object.keys(o)) if (!allowed.includes(k)) throw new Error(`${where}: unknown field ${quote(k)}`);
  };
  const str = (v, where) => {
    if (v === undefined || v === null) return "";
    if (typeof v !== "string") throw new Error(`${where} is not a string`);
    return v;
  };
  const dec = (v, where, optional = false) => {
    const s = str(v, where);
    if (s === "" && optional) return null;
    if (!/^(0|[1-9][0-9]*)$/.test(s) || BigInt(s) >= FIELD) throw new Error(`${where} ${quote(s)} is not a decimal field element`);
    return BigInt(s);
  };
  keys(doc, ["digest", "opening", "batch"], "statement");
  keys(doc.opening, ["circuit", "circuit_id", "issuer_key_hash", "revocation_nonce", "fields"], "opening");
  const o = doc.opening;
  let nonceText = "0";
  if (o.revocation_nonce !== undefined && o.revocation_nonce !== null) {
    // Only a JSON number was quoted above: a string is refused, as in Go.
    if (typeof o.revocation_nonce !== "string" || !o.revocation_nonce.startsWith("#number:")) throw new Error("opening.revocation_nonce is not a number");
    nonceText = o.revocation_nonce.slice("#number:".length);
  }
  if (!/^[0-9]+$/.test(nonceText) || BigInt(nonceText) >= 1n << 64n) throw new Error(`opening.revocation_nonce ${nonceText} is not a 64-bit nonce`);
  if (!Array.isArray(o.fields) || o.fields.length === 0 || o.fields.length > 256) throw new Error("the opening has no fields, or more than 256");
  const fields = o.fields.map((f, i) => {
    keys(f, ["name", "value", "text"], `opening.fields[${i}]`);
    return { name: str(f.name, `opening.fields[${i}].name`), value: dec(f.value, `opening.fields[${i}] (${f.name})`), text: str(f.text, `opening.fields[${i}].text`) };
  });
  let batch = null;
  if (doc.batch !== undefined && doc.batch !== null) {
    const b = doc.batch;
    keys(b, ["root", "size", "leaf_index", "path"], "batch");
    const size = b.size, index = b.leaf_index;
    if (!Number.isInteger(size) || !Number.isInteger(index) || size < 1 || size > MAX_BATCH || index < 0 || index >= size) {
      throw new Error(`batch size ${size} and leaf index ${index} do not hold (1 ≤ size ≤ ${MAX_BATCH}, index < size)`);
    }
    if (b.path !== undefined && b.path !== null && !Array.isArray(b.path)) throw new Error("batch.path is not a list");
    batch = { root: dec(b.root, "batch.root"), size, index, path: (b.path || []).map((p, i) => dec(p, `batch.path[${i}]`)) };
  }
  return {
    fromResponse,
    batch,
    digest: dec(doc.digest, "digest"),
    circuit: str(o.circuit, "opening.circuit"),
    circuitId: dec(o.circuit_id, "opening.circuit_id", true),
    issuerKeyHash: dec(o.issuer_key_hash, "opening.issuer_key_hash", true),
    revocationNonce: BigInt(nonceText),
    fields,
  };
}

// The most statements one batch anchors (the registry's MAX_BATCH).
const MAX_BATCH = 1024;

// depth is the depth of a batch of size leaves: ceil(log2 size).
export function depth(size) {
  let d = 0;
  while (1 << d < size) d++;
  return d;
}

// leafOf is a statement's leaf: Poseidon(issuer_key_hash, digest, circuit_id).
export const leafOf = (issuerKeyHash, digest, circuitId) => poseidon.hash([issuerKeyHash, digest, circuitId]);

// rootOf is the root a leaf's path leads to (docs/statement.md, "Batches"):
// bit k of the leaf index set means the node at height k is a right child,
// its sibling path[k] on the left; node = Poseidon(left, right).
export function rootOf(leaf, index, path, size) {
  const d = depth(size);
  if (path.length !== d) throw new Error(`a batch of ${size} has paths of ${d} values, not ${path.length}`);
  let node = leaf;
  for (let k = 0; k < path.length; k++) {
    node = (index >> k) & 1 ? poseidon.hash([path[k], node]) : poseidon.hash([node, path[k]]);
  }
  return node;
}

// readProof finds a decision's proof_data and public_inputs in a decision
// response (or a file holding just them): at its top, or in
// verification_proof, zk_proof, proof or an entry of zk_proofs, skipping
// one that names another blockchain_tx. It returns null when there is none
// and throws when proof_data is not 0x and 512 hex digits or an input not
// 0x and 64 hex digits below the field.
export function readProof(doc, txHash) {
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return null;
  const cands = [["proof_data", doc]];
  for (const k of ["verification_proof", "zk_proof", "proof"]) if (doc[k] !== undefined) cands.push([`${k}.proof_data`, doc[k]]);
  if (Array.isArray(doc.zk_proofs)) doc.zk_proofs.forEach((p, i) => cands.push([`zk_proofs[${i}].proof_data`, p]));
  for (const [where, c] of cands) {
    if (typeof c !== "object" || c === null || typeof c.proof_data !== "string") continue;
    if (c.blockchain_tx && String(c.blockchain_tx).toLowerCase() !== txHash.toLowerCase()) continue;
    const word = (s, n, what) => {
      if (typeof s !== "string" || !new RegExp(`^0x[0-9a-fA-F]{${2 * n}}$`).test(s)) throw new Error(`${where}: ${what}: want "0x" and ${2 * n} hex digits`);
      return s;
    };
    const data = word(c.proof_data, 256, "proof_data");
    const words = [];
    for (let i = 0; i < 8; i++) words.push(BigInt("0x" + data.slice(2 + 64 * i, 2 + 64 * (i + 1))));
    let inputs = null;
    if (c.public_inputs !== undefined && c.public_inputs !== null) {
      if (!Array.isArray(c.public_inputs)) throw new Error(`${where}: public_inputs is not a list`);
      inputs = c.public_inputs.map((s, i) => {
        const v = BigInt(word(s, 32, `public_inputs[${i}]`));
        if (v >= FIELD) throw new Error(`${where}: public_inputs[${i}] is not a field element`);
        return v;
      });
      if (inputs.length === 0) inputs = null;
    }
    return { where, words, inputs };
  }
  return null;
}

// circuitIdOf is a circuit's id: uint256(keccak256(name)) mod r.
const circuitIdOf = (name) => BigInt(ethers.keccak256(ethers.toUtf8Bytes(name))) % FIELD;

// The renderings of docs/statement.md ("Encodings"): what each text must be.
const LAST_DAY = 2932896n; // 9999-12-31
export function render(schema, values, i) {
  const f = schema.fields[i];
  const v = values[i];
  if (f.slot) {
    const j = schema.fields.findIndex((g) => g.name === f.slot);
    if (j < 0) throw new Error(`the schema names no slot field ${quote(f.slot)}`);
    if (values[j] === 0n) {
      if (v !== 0n) throw new Error(`value ${v} in an empty slot (${f.slot} is 0)`);
      return "";
    }
  }
  switch (f.text) {
    case "none":
      return "";
    case "code": {
      if (v === 0n) return "";
      let h = v.toString(16);
      if (h.length % 2) h = "0" + h;
      const bytes = ethers.getBytes("0x" + h);
      try {
        if (bytes.length > 31) throw new Error();
        return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        throw new Error(`value ${v} is not the field of a 1-31 byte UTF-8 code`);
      }
    }
    case "number":
      return v.toString();
    case "day":
      if (v > LAST_DAY) throw new Error(`value ${v} is not a day number before 10000-01-01`);
      return new Date(Number(v) * 86400000).toISOString().slice(0, 10);
    case "flag":
      if (v > 1n) throw new Error(`value ${v} is not a flag (0 or 1)`);
      return v === 1n ? "true" : "false";
    case "cents":
      return `${v / 100n}.${(v % 100n).toString().padStart(2, "0")}`;
    case "clinical": {
      const n = BigInt(schema.ranks.length);
      if (v >= 128n || v % 8n >= n || (v / 8n) % 8n >= n) {
        throw new Error(`value ${v} is not interaction + 8·contraindication + 64·valid with ranks 0-${n - 1n}`);
      }
      return `interaction=${schema.ranks[v % 8n]} contraindication=${schema.ranks[(v / 8n) % 8n]} valid=${v / 64n === 1n}`;
    }
    case "triggers": {
      const base = BigInt(schema.trigger_base || 0);
      if (base < 2n) throw new Error("the schema has no trigger packing");
      let rest = v;
      const names = [];
      for (let k = 0; k < schema.trigger_slots; k++) {
        const t = rest % base;
        rest /= base;
        if (t === 0n) continue;
        if (t > BigInt(schema.triggers.length)) throw new Error(`value ${v} names trigger ${t} of a list of ${schema.triggers.length}`);
        names.push(schema.triggers[Number(t) - 1]);
      }
      if (rest !== 0n) throw new Error(`value ${v} packs more than ${schema.trigger_slots} triggers`);
      return names.join(" ");
    }
    case "entries":
      if (v === 0n) return "";
      throw new Error("an entries text is the caller's words, not rendered from its value: CheckEntries checks it against the value");
  }
  throw new Error(`unknown rendering ${quote(f.text)}`);
}

// entriesValue is the value an "entries" text commits to: 0 for "", else
// the first 31 bytes of the text's SHA-256 as a big-endian integer.
export function entriesValue(text) {
  if (text === "") return 0n;
  return BigInt("0x" + ethers.sha256(ethers.toUtf8Bytes(text)).slice(2, 64));
}

// checkEntries checks an "entries" text (prescription-v3's unidentified
// entries: the caller's own words, which no value renders) the other way
// round: it must be a JSON array of "medication: …" / "allergy: …" strings
// whose SHA-256 gives the value. It throws with the Go checker's words.
export function checkEntries(text, v) {
  if (v === 0n) {
    if (text !== "") throw new Error("value 0 lists no entries: the text must be empty");
    return;
  }
  let list;
  try {
    list = JSON.parse(text);
  } catch {
    list = null;
  }
  const ok = Array.isArray(list) && list.length > 0 &&
    list.every((e) => typeof e === "string" && (e.startsWith("medication: ") || e.startsWith("allergy: ")));
  if (!ok) throw new Error('text is not a JSON array of "medication: …" or "allergy: …" entries');
  if (entriesValue(text) !== v) throw new Error("text does not hash to the value (the first 31 bytes of its SHA-256)");
}

// statementChecks checks every part of the statement against what the chain
// recorded (rec: the StatementRecorded event's digest, issuer key hash and
// circuit id at the decision's block), as package verify does: the same
// checks, in the same order, with the same lines.
async function statementChecks(registry, st, rec, block) {
  const values = st.fields.map((f) => f.value);
  const recomputed = digestOf(values);
  check("digest", st.digest === recomputed,
    `the stated digest ${hex32(st.digest)} ${equals(st.digest, recomputed)} the digest recomputed from the opening's values ${hex32(recomputed)}`);
  check("statement", recomputed === rec.digest,
    `the digest recomputed from the opening ${equals(recomputed, rec.digest)} the recorded digest ${hex32(rec.digest)}`);

  const schema = SCHEMAS.find((s) => BigInt(s.circuit_id) === rec.circuitId);
  const named = circuitIdOf(st.circuit);
  check("circuit", named === rec.circuitId,
    `opening.circuit ${quote(st.circuit)} (id ${hex32(named)}) ${is(named, rec.circuitId)} the recorded circuit ${hex32(rec.circuitId)} (${schema ? schema.circuit : "an unknown circuit"})`);
  check("circuit id", st.circuitId === rec.circuitId,
    `opening.circuit_id ${hex32(st.circuitId)} ${is(st.circuitId, rec.circuitId)} the recorded circuit id`);

  if (!schema) {
    const why = `no statement schema for the recorded circuit ${hex32(rec.circuitId)}: this verifier knows ${SCHEMAS.map((s) => `${s.circuit} (${hex32(s.circuit_id)})`).join(", ")}`;
    check("schema", false, why);
    check("text", false, `not checked: ${why}`);
  } else {
    const want = schema.fields, have = st.fields;
    let problem = null;
    for (let i = 0; i < want.length && problem === null; i++) {
      if (i >= have.length) problem = `the opening has ${have.length} fields, ${schema.circuit} has ${want.length} (field ${i} is ${want[i].name})`;
      else if (have[i].name !== want[i].name) problem = `field ${i} is named ${quote(have[i].name)}, ${schema.circuit}'s field ${i} is ${quote(want[i].name)}`;
    }
    if (problem === null && have.length > want.length) {
      problem = `the opening has ${have.length} fields, ${schema.circuit} has ${want.length} (field ${want.length} ${quote(have[want.length].name)} is extra)`;
    }
    check("schema", problem === null, problem ?? `the ${want.length} field names, in order, are ${schema.circuit}'s`);
    if (have.length !== want.length) {
      check("text", false, `not checked: the opening has ${have.length} fields, ${schema.circuit} has ${want.length}`);
    } else {
      let bad = 0;
      for (let i = 0; i < have.length; i++) {
        let text;
        try {
          if (want[i].text === "entries") {
            checkEntries(have[i].text, values[i]);
            continue;
          }
          text = render(schema, values, i);
        } catch (err) {
          bad++;
          check("text", false, `field ${i} ${want[i].name}: ${err.message}`);
          continue;
        }
        if (have[i].text !== text) {
          bad++;
          check("text", false, `field ${i} ${want[i].name}: text ${quote(have[i].text)} is not ${quote(text)}, the rendering of its value ${have[i].value}`);
        }
      }
      if (bad === 0) check("text", true, `every text is the rendering of its value (${schema.circuit}'s renderings)`);
    }
  }

  check("issuer key", st.issuerKeyHash === rec.issuerKeyHash,
    `opening.issuer_key_hash ${hex32(st.issuerKeyHash)} ${is(st.issuerKeyHash, rec.issuerKeyHash)} the recorded issuer key hash`);

  // The nonce checked is the committed revocation_nonce field: the plain
  // copy must agree with it.
  const field = st.fields.find((f) => f.name === "revocation_nonce");
  if (field === undefined || field.value >= 1n << 64n) {
    check("nonce", false, field === undefined ? "the opening has no revocation_nonce field" : `the revocation_nonce field ${field.value} is not a 64-bit nonce`);
    check("revocation", false, "not checked: the opening commits to no revocation nonce");
    return;
  }
  const nonce = field.value;
  check("nonce", st.revocationNonce === nonce,
    `opening.revocation_nonce ${st.revocationNonce} ${is(st.revocationNonce, nonce)} the committed revocation_nonce field ${nonce}`);
  const at = await registry.revokedIn(rec.issuerKeyHash, nonce);
  if (at !== 0n && at <= BigInt(block)) check("revocation", false, `credential nonce ${nonce} was revoked in block ${at}, at or before the decision's block ${block}`);
  else if (at !== 0n) check("revocation", true, `credential nonce ${nonce} was valid at block ${block} (revoked later, in block ${at})`);
  else check("revocation", true, `credential nonce ${nonce} is not revoked`);
}

async function main() {
  const a = args();
  // The statement first: a file that is not a statement is refused before
  // the chain is asked anything.
  let st = null;
  if (a.statement) {
    try {
      st = readStatement(a.statement);
    } catch (err) {
      check("statement", false, `${a.statement}: not a statement JSON document: ${err.message}`);
      return;
    }
    if (st.fromResponse) {
      console.log(`note statement     read from a decision response: only its "statement" is checked; the response's other fields are the service's words, bound to nothing on chain — read the decision from the statement`);
    }
  }
  // A batched decision's proof is the answer's (a single-record one's is
  // in its transaction): read only when the statement names a batch or
  // --proof is given.
  let proof = null;
  if (a.proof || (st !== null && st.batch !== null)) {
    const path = a.proof || a.statement;
    try {
      proof = readProof(JSON.parse(readFileSync(path, "utf8")), a.tx);
      if (proof === null && a.proof) throw new Error(`holds no proof_data of transaction ${a.tx}`);
    } catch (err) {
      check("proof", false, `${path}: ${err.message}`);
      return;
    }
    if (proof !== null) console.log(`note proof         read from ${path} (${proof.where}); it is re-verified for the statement's leaf by eth_call`);
  }
  const provider = new ethers.JsonRpcProvider(a.rpc, undefined, { staticNetwork: true });
  const registryAddr = ethers.getAddress(a.registry);
  const registry = new ethers.Contract(registryAddr, REGISTRY_ABI, provider);

  // 1. The transaction was mined and succeeded, and it called our registry.
  const receipt = await provider.getTransactionReceipt(a.tx);
  if (!check("receipt", receipt !== null && receipt.status === 1,
    receipt ? `mined in block ${receipt.blockNumber}, status ${receipt.status}` : `transaction ${a.tx} not found on this chain`)) return;
  const block = receipt.blockNumber;
  const tx = await provider.getTransaction(a.tx);
  if (!check("registry", tx.to !== null && ethers.getAddress(tx.to) === registryAddr,
    `transaction sent to ${tx.to}, expected registry ${registryAddr}`)) return;

  // 2. The registry emitted StatementRecorded (logs from other addresses
  // ignored) — or, for a batch's transaction, BatchRecorded.
  let ev = null, batchEv = null;
  for (const log of receipt.logs) {
    if (ethers.getAddress(log.address) !== registryAddr) continue;
    const parsed = registry.interface.parseLog(log);
    if (parsed && parsed.name === "StatementRecorded") ev = parsed.args;
    if (parsed && parsed.name === "BatchRecorded" && batchEv === null) batchEv = parsed.args;
  }
  let batchCall = null;
  try { batchCall = registry.interface.decodeFunctionData("recordBatch", tx.data); } catch { /* not a recordBatch call */ }
  if (batchEv !== null || batchCall !== null) {
    await batchChecks(provider, registry, batchEv, batchCall, st, proof, block);
    return;
  }
  if (!check("event", ev !== null, ev ? `StatementRecorded digest ${hex32(ev.digest)} issuer ${hex32(ev.issuerKeyHash)} circuit ${hex32(ev.circuitId)}`
    : "no StatementRecorded event from the registry")) return;
  if (st !== null && st.batch !== null) {
    check("batch", false, `the statement places its leaf in batch ${hex32(st.batch.root)} (leaf ${st.batch.index} of ${st.batch.size}), but this transaction records one statement ` +
      "(StatementRecorded), not a batch: it is not the transaction that anchored this statement");
  }

  // 3. The call's public inputs are exactly [issuerKeyHash, digest, circuitId].
  let call = null;
  try { call = registry.interface.decodeFunctionData("record", tx.data); } catch { /* not a record call */ }
  const inputs = call ? call.publicInputs.map(BigInt) : [];
  if (!check("inputs", call !== null && inputs.length === 3 && inputs[0] === ev.issuerKeyHash &&
    inputs[1] === ev.digest && inputs[2] === ev.circuitId && call.circuitId === ev.circuitId,
    "public inputs [issuerKeyHash, digest, circuitId] of the call equal the event's")) return;

  // 4. The verifier bound to the circuit at that block, and its answer, re-run.
  const verifier = await registry.verifierOf(ev.circuitId, { blockTag: block });
  const code = await provider.getCode(verifier, block);
  if (!check("verifier", verifier === ev.verifier && code !== "0x", `circuit ${hex32(ev.circuitId)} is bound to ${verifier} at block ${block}`)) return;
  const v = new ethers.Contract(verifier, VERIFIER_ABI, provider);
  const ok = await v.verifyProof([...call.proof], [...call.publicInputs], { blockTag: block });
  check("proof", ok, `Groth16 verification re-run by eth_call at block ${block}: ${ok ? "accepted" : "REJECTED"}`);

  // 5. The issuer (payer key) was registered and not retired at that block.
  const iss = await registry.issuers(ev.issuerKeyHash);
  const active = iss.registeredAt !== 0n && iss.registeredAt <= block && (iss.retiredAt === 0n || block < iss.retiredAt);
  check("issuer", active, `issuer ${hex32(ev.issuerKeyHash)} registered in block ${iss.registeredAt}, retired ${iss.retiredAt || "never"}`);

  // 6. Every part of the statement the caller was handed. Without one,
  // nothing the decision states is verified: that is a failure, not a pass.
  if (st === null) {
    check("statement", false, "not checked: no statement was given, so nothing this decision states is verified — not the payer, plan, " +
      "codes, day or outcome, not the circuit's schema or texts, not the credential's revocation; only that the transaction recorded some statement", true);
    return;
  }
  await statementChecks(registry, st, { digest: ev.digest, issuerKeyHash: ev.issuerKeyHash, circuitId: ev.circuitId }, block);
}

// batchChecks checks a decision anchored in a batch (docs/verify.md,
// "Batches"), after receipt and registry: batch, path, verifier, proof,
// issuer, then the statement checks against the leaf's values — the same
// checks, in the same order, with the same lines as package verify.
async function batchChecks(provider, registry, ev, call, st, proof, block) {
  if (ev === null) {
    check("batch", false, "no BatchRecorded event from the registry");
    return;
  }
  const ids = [...ev.circuitIds].map(BigInt);
  const list = (ws) => `[${ws.map(hex32).join(", ")}]`;
  const same = call !== null && call.root === ev.root && call.size === ev.size && call.circuitIds.length === ids.length &&
    [...call.circuitIds].every((c, i) => c === ids[i]);
  if (!check("batch", same, `BatchRecorded root ${hex32(ev.root)} size ${ev.size} circuits ${list(ids)} submitter ${ev.submitter}; ` +
    `the recordBatch call's root, size and circuit ids ${same ? "are the event's" : "are not the event's"}`)) return;

  if (st === null) {
    check("statement", false, "not checked: no statement was given, so nothing this decision states is verified — not which of the batch's " +
      "statements it is, its proof, the payer, plan, codes, day or outcome, the circuit's schema or texts, the credential's revocation; " +
      "only that the transaction recorded some batch", true);
    return;
  }
  const b = st.batch;
  if (b === null) {
    check("batch", false, `the statement names no batch (no root, leaf index or path), but this transaction records batch ${hex32(ev.root)} of ${ev.size} ` +
      "statements: the statement's leaf cannot be placed under its root");
    return;
  }
  if (b.root !== ev.root) {
    check("batch", false, `the statement's batch root ${hex32(b.root)} is not the recorded root ${hex32(ev.root)}: the statement is of another batch`);
    return;
  }
  if (BigInt(b.size) !== ev.size) {
    check("batch", false, `the statement's batch size ${b.size} is not the recorded size ${ev.size}`);
    return;
  }
  check("batch", true, `the statement's batch root and size equal the event's (leaf ${b.index} of ${b.size})`);

  if (st.issuerKeyHash === null || st.circuitId === null) {
    check("path", false, "the statement's leaf Poseidon(issuer_key_hash, digest, circuit_id) cannot be computed: the opening has no " +
      (st.issuerKeyHash === null ? "issuer_key_hash" : "circuit_id"));
    return;
  }
  const leaf = leafOf(st.issuerKeyHash, st.digest, st.circuitId);
  let root;
  try {
    root = rootOf(leaf, b.index, b.path, b.size);
  } catch (err) {
    check("path", false, `the statement's leaf ${hex32(leaf)} with its path: ${err.message}`);
    return;
  }
  if (root !== ev.root) {
    check("path", false, `the statement's leaf ${hex32(leaf)} with its path (leaf index ${b.index}, ${b.path.length} values) leads to ${hex32(root)}, not to the recorded root ${hex32(ev.root)}`);
    return;
  }
  check("path", true, `the statement's leaf ${hex32(leaf)} with its path (leaf index ${b.index}, ${b.path.length} values) leads to the recorded root`);

  // The leaf is anchored: what the chain recorded for this statement is
  // the leaf's three values, as of the batch's block.
  const rec = { digest: st.digest, issuerKeyHash: st.issuerKeyHash, circuitId: st.circuitId };
  if (!ids.includes(rec.circuitId)) {
    check("verifier", false, `the leaf's circuit ${hex32(rec.circuitId)} is not among the batch's circuit ids ${list(ids)}`);
    return;
  }
  const verifier = await registry.verifierOf(rec.circuitId, { blockTag: block });
  const code = await provider.getCode(verifier, block);
  if (!check("verifier", code !== "0x", `the leaf's circuit ${hex32(rec.circuitId)} is among the batch's circuit ids and bound to ${verifier} at block ${block}`)) return;

  const inputs = [rec.issuerKeyHash, rec.digest, rec.circuitId];
  if (proof === null) {
    check("proof", false, "not checked: no proof was given (the answer's proof_data): a batch's transaction records a Merkle root, not proofs, " +
      "so nothing shows this statement was proven — pass the whole decision response, or its proof", true);
  } else if (proof.inputs !== null && (proof.inputs.length !== 3 || proof.inputs.some((v, i) => v !== inputs[i]))) {
    check("proof", false, `the answer's public_inputs ${list(proof.inputs)} are not the statement's [issuer_key_hash, digest, circuit_id] ${list(inputs)}: the proof is of another statement`);
  } else {
    const v = new ethers.Contract(verifier, VERIFIER_ABI, provider);
    const ok = await v.verifyProof(proof.words, inputs, { blockTag: block });
    check("proof", ok, `Groth16 verification of the answer's proof for the statement's [issuer_key_hash, digest, circuit_id] re-run by eth_call at block ${block}: ${ok ? "accepted" : "REJECTED"}`);
  }

  const iss = await registry.issuers(rec.issuerKeyHash);
  const active = iss.registeredAt !== 0n && iss.registeredAt <= block && (iss.retiredAt === 0n || block < iss.retiredAt);
  check("issuer", active, `issuer ${hex32(rec.issuerKeyHash)} registered in block ${iss.registeredAt}, retired ${iss.retiredAt || "never"}`);

  await statementChecks(registry, st, rec, block);
}

function exitStatus() {
  const failed = checks.filter((c) => !c.ok);
  if (checks.length > 0 && failed.length === 0) {
    console.log(`verified: all ${checks.length} checks passed`);
    return 0;
  }
  if (failed.length > 0 && failed.every((c) => c.unchecked)) {
    if (failed.some((c) => c.name === "proof")) {
      console.error("NOT VERIFIED: the statement's leaf is in the recorded batch, but no proof was given, so nothing shows it was proven (pass the whole decision response as --statement, or --proof)");
    } else {
      console.error("NOT VERIFIED: the transaction is a recorded decision, but no statement was given, so nothing it states was checked (pass --statement)");
    }
    return 3;
  }
  const names = [...new Set(failed.map((c) => c.name))];
  console.error(`REFUSED: ${names.length} of ${checks.length} checks failed (${names.join(", ")})`);
  return 1;
}

// Run as a program (not when imported, as verify/js_test.go imports render).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().then(() => process.exit(exitStatus()), (err) => { console.error(err.message); process.exit(2); });
}
