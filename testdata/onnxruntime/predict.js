// Runs an ONNX model exported by the service (GET /api/v1/federated/model?format=onnx)
// with onnxruntime-node, a runtime we did not write, and prints its outputs.
//
//   node predict.js MODEL.onnx ROWS.json
//
// ROWS.json is an array of rows of raw feature values (null: missing, fed
// as NaN). Prints {"probabilities": [[...], ...], "class": [...],
// "metadata": {...}} on standard output. The Go tests (federated/onnx/onnxtest)
// compare the result with the service's own predictions.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [modelPath, rowsPath] = process.argv.slice(2);
  const rows = JSON.parse(fs.readFileSync(rowsPath, 'utf8'));
  const session = await ort.InferenceSession.create(fs.readFileSync(modelPath));
  const width = rows.length ? rows[0].length : 0;
  const data = Float64Array.from(rows.flat().map((v) => (v === null ? NaN : v)));
  const input = new ort.Tensor('float64', data, [rows.length, width]);
  const out = await session.run({ [session.inputNames[0]]: input });
  const probs = out.probabilities;
  const classes = probs.dims[1];
  const p = Array.from(probs.data);
  const result = {
    inputs: session.inputNames,
    outputs: session.outputNames,
    probabilities: rows.map((_, i) => p.slice(i * classes, (i + 1) * classes)),
    class: Array.from(out.class.data, Number),
  };
  process.stdout.write(JSON.stringify(result));
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack ? err.stack : err) + '\n');
  process.exit(1);
});
