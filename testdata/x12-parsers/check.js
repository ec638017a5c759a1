// Reads X12 interchanges (one per file argument) with two parsers we did
// not write and prints one JSON report per file on standard output:
//
//   node-x12 1.7.1 in strict mode: the ISA length, IEA/GE/SE control
//   numbers and counts (a violation throws); then every segment against
//   node-x12's own rule engine (X12SegmentRule/X12ElementRule) with the
//   element definitions of 005010X279A1 (271), 005010X231A1 (999) and the
//   TA1, and the envelope against its default interchange rules.
//
//   x12-parser 1.3.0: the stream parser's segments, and its grouper's HL
//   loops.
//
// The Go tests (x12/x12test) read the report: both parsers must accept the
// interchange, and the tests check the content through the segments the
// parsers returned. Exits 1 when a parser refuses a file.
'use strict';
const fs = require('fs');
const { Readable } = require('stream');
const nx = require('node-x12');
const { X12parser, X12grouper, Schema } = require('x12-parser');

const AN = 'alphanumeric';
const el = (min, max, mandatory, checkType) => ({ minMax: [min, max], mandatory: !!mandatory, checkType: checkType || AN });
const id = (min, max, mandatory) => el(min, max, mandatory, 'id');
const num = (min, max, mandatory) => el(min, max, mandatory, 'number');
const dec = (min, max) => el(min, max, false, 'decimal');
const seg = (tag, elements) => ({ tag, elements });

// The element definitions (X12 data element dictionary, as the guides use
// them) of every segment the service writes.
const rules = {
  BHT: seg('BHT', [id(4, 4, true), id(2, 2, true), el(1, 50), el(8, 8, true, 'datelong'), el(4, 8, true, 'time')]),
  HL: seg('HL', [el(1, 12, true), el(1, 12), id(1, 2, true), id(1, 1, true)]),
  NM1: seg('NM1', [id(2, 3, true), id(1, 1, true), el(1, 60), el(1, 35), el(1, 25), el(1, 10), el(1, 10), id(1, 2), el(2, 80)]),
  AAA: seg('AAA', [id(1, 1, true), id(2, 2), id(2, 2, true), id(1, 1, true)]),
  TRN: seg('TRN', [id(1, 2, true), el(1, 50, true), el(10, 10, true), el(1, 50)]),
  DTP: seg('DTP', [id(3, 3, true), id(2, 3, true), el(1, 35, true)]),
  EB: seg('EB', [id(1, 2, true), id(3, 3), id(1, 2), id(1, 3), el(1, 50), id(1, 2), dec(1, 18), dec(1, 10), id(2, 2), dec(1, 15), id(1, 1), id(1, 1), el(1, 60)]),
  MSG: seg('MSG', [el(1, 264, true)]),
  AK1: seg('AK1', [id(2, 2, true), num(1, 9, true), el(1, 12)]),
  AK2: seg('AK2', [id(3, 3, true), el(4, 9, true), el(1, 35)]),
  IK3: seg('IK3', [id(2, 3, true), num(1, 10, true), el(1, 6), id(1, 3)]), // IK303: data element 447, AN 1/6 in 005010
  IK4: seg('IK4', [el(1, 10, true), num(1, 4), id(1, 3, true)]),
  IK5: seg('IK5', [id(1, 1, true), id(1, 3), id(1, 3), id(1, 3), id(1, 3), id(1, 3)]),
  AK9: seg('AK9', [id(1, 1, true), num(1, 6, true), num(1, 6, true), num(1, 6, true), id(1, 3), id(1, 3), id(1, 3), id(1, 3), id(1, 3)]),
};
// The envelope: node-x12's own default rules for ISA, GS, SE, GE, IEA,
// which are 004010's in two places that 005010 changed: ISA11 is the
// repetition separator (a special character, not an identifier), and ST
// has a third element, the implementation convention reference.
const envelope = new nx.X12InterchangeRule({ group: { transaction: { segments: [] } } });
envelope.header.elements[10] = new nx.X12ElementRule({ mandatory: true, minMax: [1, 1] });
envelope.group.transaction.header = new nx.X12SegmentRule({
  tag: 'ST', mandatory: true,
  elements: [{ mandatory: true, checkType: 'st01' }, { mandatory: true, minMax: [4, 9], checkType: 'number' }, el(1, 35, true)],
});
const ta1 = seg('TA1', [num(9, 9, true), el(6, 6, true, 'dateshort'), el(4, 4, true, 'timeshort'), id(1, 1, true), num(3, 3, true)]);

// ruleFor is the rule engine's rule for one segment: node-x12 reports an
// absent element as missing, so the optional elements a segment leaves
// off its end (X12 drops trailing empty elements) are skipped.
function ruleFor(def, s) {
  const n = s.elements.length;
  return new nx.X12SegmentRule({
    tag: def.tag, mandatory: true,
    elements: def.elements.map((e, i) => (i < n || e.mandatory ? e : { skip: true })),
  });
}

function values(s) {
  return [s.tag, ...s.elements.map((e) => e.value)];
}

function readNodeX12(edi) {
  const out = { ok: false, ruleErrors: [] };
  let ic;
  try {
    ic = new nx.X12Parser(true).parse(edi);
  } catch (e) {
    out.error = String(e && e.message ? e.message : e);
    // node-x12's model has no place for a TA1 (an interchange with no
    // functional group): its strict mode refuses it, which is node-x12's
    // limit, not the interchange's. Such an interchange is read in
    // non-strict mode instead, and passes only if that refusal, and the
    // missing group it implies, are its only diagnostics.
    if (!/^X12 Standard: TA1 segment cannot appear outside of a functional group/.test(out.error)) return out;
    const lax = new nx.X12Parser(false);
    ic = lax.parse(edi);
    const others = lax.diagnostics.map((d) => d.message).filter((m) => !/TA1 segment cannot appear outside|at least one functional group/.test(m));
    if (others.length > 0 || ic === undefined || ic.trailer === undefined) {
      out.error += '; ' + others.join('; ');
      return out;
    }
    delete out.error;
  }
  const fail = (where, r) => { if (r !== true) out.ruleErrors.push({ where, report: r }); };
  fail('ISA', envelope.header.assert(ic.header));
  fail('IEA', envelope.trailer.assert(ic.trailer));
  out.header = values(ic.header);
  out.trailer = values(ic.trailer);
  out.groups = ic.functionalGroups.map((g) => {
    fail('GS', envelope.group.header.assert(g.header));
    fail('GE', envelope.group.trailer.assert(g.trailer));
    return {
      header: values(g.header),
      trailer: values(g.trailer),
      transactions: g.transactions.map((t) => {
        fail('ST', envelope.group.transaction.header.assert(t.header, 1));
        fail('SE', envelope.group.transaction.trailer.assert(t.trailer, t.segments.length + 2));
        return {
          header: values(t.header),
          trailer: values(t.trailer),
          segments: t.segments.map((s, i) => {
            const def = rules[s.tag];
            if (def === undefined) out.ruleErrors.push({ where: s.tag, report: 'no rule for this segment' });
            else fail(s.tag + ' at ' + (i + 2), ruleFor(def, s).assert(s, i + 2));
            return values(s);
          }),
        };
      }),
    };
  });
  // A TA1 has no functional group: node-x12 keeps it out of the model, so
  // it is read from the text and checked with the same rule engine.
  if (out.groups.length === 0) {
    const term = edi.charAt(105);
    const sep = edi.charAt(3);
    const raw = edi.split(term).map((s) => s.trim()).find((s) => s.startsWith('TA1' + sep));
    if (raw === undefined) {
      out.error = 'no functional group and no TA1';
      return out;
    }
    const s = new nx.X12Segment('TA1');
    s.setElements(raw.split(sep).slice(1));
    fail('TA1', ruleFor(ta1, s).assert(s, 1));
    out.ta1 = values(s);
  }
  out.ok = out.ruleErrors.length === 0;
  return out;
}

async function readX12Parser(edi) {
  const collect = (stream) => new Promise((resolve, reject) => {
    const items = [];
    stream.on('data', (d) => items.push(d));
    stream.on('error', reject);
    stream.on('end', () => resolve(items));
  });
  const segments = await collect(Readable.from([edi]).pipe(new X12parser()));
  const schema = new Schema('005010X279A1', {
    start: 'ISA', end: 'IEA', name: 'interchange',
    groups: [{ start: 'HL', name: 'HL', terminators: ['SE'] }],
  }, true);
  const grouped = await collect(Readable.from([edi]).pipe(new X12parser()).pipe(new X12grouper([schema])));
  const hl = [];
  const walk = (g) => {
    for (const d of g.data || []) {
      if (d.isGroup && d.name === 'HL') hl.push(d.data.map((s) => s.name));
      else if (d.isGroup) walk(d);
    }
  };
  grouped.forEach(walk);
  return { ok: segments.length > 0 && segments[0].name === 'ISA', segments, hl };
}

(async () => {
  let failed = false;
  for (const file of process.argv.slice(2)) {
    const edi = fs.readFileSync(file, 'utf8');
    const report = { file, nodeX12: readNodeX12(edi) };
    try {
      report.x12Parser = await readX12Parser(edi);
    } catch (e) {
      report.x12Parser = { ok: false, error: String(e && e.message ? e.message : e) };
    }
    if (!report.nodeX12.ok || !report.x12Parser.ok) failed = true;
    process.stdout.write(JSON.stringify(report) + '\n');
  }
  process.exit(failed ? 1 : 0);
})();
