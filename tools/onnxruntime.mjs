// onnxruntime.mjs: chapter 10's mha_fast against ONNX Runtime, on the same case.
//
//   node tools/onnxruntime.mjs check            TAP: ONNX Runtime's output is mha_fast's, within 1e-5
//   node tools/onnxruntime.mjs bench [ROUNDS]   the table in Appendix B (make bench runs it)
//
// Run from the top of the book, after make (it runs $ABH_BIN/mha_bench, build/bin by default). It needs
// package-lock.json's onnxruntime-node and onnx-proto (npm ci; .npmrc keeps
// onnxruntime-node's install script from downloading anything: the package ships its
// CPU library).
//
// For each case it writes chapter 5's module as two ONNX graphs, with the same weights:
//   fused: q, k, v = MatMul + Add; com.microsoft.MultiHeadAttention (unidirectional=1 for
//          causal), ONNX Runtime's flash-attention kernel on the CPU; MatMul + Add;
//   plain: what an exporter writes for the module: MatMul, Add, Reshape, Transpose, Div,
//          Where (the causal mask), Softmax, MatMul, Transpose, Reshape, MatMul, Add.
// The case (X and the four Linear layers, drawn from a seed, as nn.Linear and torch.rand
// draw them) is written as mha_fast --load reads it, and `mha_bench --load DIR` times the
// fastest rung on it in a process of its own and writes its output.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const die = (msg) => { process.stderr.write(`onnxruntime.mjs: ${msg}\n`); process.exit(1); };
let ort, onnx;
try {
  ort = require('onnxruntime-node');
  ({ onnx } = require('onnx-proto'));
} catch (e) {
  die('no onnxruntime-node or onnx-proto: npm ci (package-lock.json pins them; nothing else is downloaded)');
}
// The programs make built for this MODE (make exports ABH_BIN: build/bin, or build/debug/bin).
const BENCH = `${process.env.ABH_BIN || 'build/bin'}/mha_bench`;
ort.env.logLevel = 'error';         // not its warnings about the graphs' unused names

// ---- .npy files: little-endian float32, C order ---------------------------------------
function npyRead(file) {
  const buf = fs.readFileSync(file);
  const len = buf.readUInt16LE(8), header = buf.toString('latin1', 10, 10 + len);
  if (!header.includes("'<f4'") || header.includes("'fortran_order': True")) die(`${file}: not a C-order float32 .npy`);
  const shape = header.match(/'shape': \(([^)]*)\)/)[1].split(',').filter((s) => s.trim()).map(Number);
  const data = new Float32Array(buf.buffer.slice(buf.byteOffset + 10 + len, buf.byteOffset + buf.length));
  return { shape, data };
}
function npyWrite(file, t) {
  let header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${t.shape.join(', ')}${t.shape.length === 1 ? ',' : ''}), }`;
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1'); head[6] = 1; head[7] = 0; head.writeUInt16LE(header.length, 8);
  fs.writeFileSync(file, Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(t.data.buffer)]));
}

// ---- the case: nn.Linear's U(-1/sqrt(in), 1/sqrt(in)) weights and biases, X ~ U(0, 1) ----
function rng(seed) {            // mulberry32: a small generator, the same numbers everywhere
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function uniform(shape, lo, hi, next) {
  const data = new Float32Array(shape.reduce((a, b) => a * b, 1));
  for (let i = 0; i < data.length; i++) data[i] = lo + (hi - lo) * next();
  return { shape, data };
}
function writeCase(dir, B, T, D, seed) {
  const next = rng(seed), bound = 1 / Math.sqrt(D), c = { X: uniform([B, T, D], 0, 1, next) };
  for (const p of ['q', 'k', 'v', 'o']) {
    c[`${p}_proj.weight`] = uniform([D, D], -bound, bound, next);
    c[`${p}_proj.bias`] = uniform([D], -bound, bound, next);
  }
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, t] of Object.entries(c)) npyWrite(path.join(dir, `${name}.npy`), t);
  return c;
}

// ---- ONNX graphs ----------------------------------------------------------------------
const F = onnx.TensorProto.DataType.FLOAT;
const tensor = (name, t, type = F) => onnx.TensorProto.create({ name, dims: t.shape, dataType: type,
  rawData: new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength) });
const ints = (name, v) => tensor(name, { shape: [v.length], data: BigInt64Array.from(v.map(BigInt)) },
  onnx.TensorProto.DataType.INT64);
function node(op, input, output, attrs = {}, domain = '') {
  const A = onnx.AttributeProto.AttributeType;
  const attribute = Object.entries(attrs).map(([name, v]) => (Array.isArray(v)
    ? onnx.AttributeProto.create({ name, ints: v, type: A.INTS })
    : Number.isInteger(v) ? onnx.AttributeProto.create({ name, i: v, type: A.INT })
      : onnx.AttributeProto.create({ name, f: v, type: A.FLOAT })));
  return onnx.NodeProto.create({ opType: op, input, output, attribute, domain, name: output[0] });
}
const transposed = (w) => {                      // (out, in) as torch stores it -> (in, out)
  const [o, i] = w.shape, t = new Float32Array(o * i);
  for (let r = 0; r < o; r++) for (let c = 0; c < i; c++) t[c * o + r] = w.data[r * i + c];
  return { shape: [i, o], data: t };
};
// nodes and initializers of y = x @ W^T + b, torch's Linear
function linear(g, c, p, x, y) {
  g.init.push(tensor(`${p}.W`, transposed(c[`${p}_proj.weight`])), tensor(`${p}.b`, c[`${p}_proj.bias`]));
  g.nodes.push(node('MatMul', [x, `${p}.W`], [`${y}.xW`]), node('Add', [`${y}.xW`, `${p}.b`], [y]));
}
function attentionFused(g, H, causal) {
  g.nodes.push(node('MultiHeadAttention', ['q', 'k', 'v'], ['mixed'],
    causal ? { num_heads: H, unidirectional: 1 } : { num_heads: H }, 'com.microsoft'));
}
function attentionPlain(g, B, T, D, H, causal) {
  const hd = D / H;
  g.init.push(ints('heads', [B, T, H, hd]), ints('merged', [B, T, D]),
    tensor('sqrt_hd', { shape: [], data: new Float32Array([Math.sqrt(hd)]) }));
  for (const p of ['q', 'k', 'v']) {
    g.nodes.push(node('Reshape', [p, 'heads'], [`${p}4`]),
      node('Transpose', [`${p}4`], [`${p}h`], { perm: p === 'k' ? [0, 2, 3, 1] : [0, 2, 1, 3] }));
  }
  g.nodes.push(node('MatMul', ['qh', 'kh'], ['qk']), node('Div', ['qk', 'sqrt_hd'], ['scores']));
  let s = 'scores';
  if (causal) {                                   // masked_fill(mask == 0, -1e20), as Where
    const hidden = new Uint8Array(T * T);
    for (let t = 0; t < T; t++) for (let j = t + 1; j < T; j++) hidden[t * T + j] = 1;
    g.init.push(tensor('hidden', { shape: [T, T], data: hidden }, onnx.TensorProto.DataType.BOOL),
      tensor('fill', { shape: [], data: new Float32Array([-1e20]) }));
    g.nodes.push(node('Where', ['hidden', 'fill', 'scores'], ['filled']));
    s = 'filled';
  }
  g.nodes.push(node('Softmax', [s], ['att'], { axis: -1 }), node('MatMul', ['att', 'vh'], ['yh']),
    node('Transpose', ['yh'], ['y4'], { perm: [0, 2, 1, 3] }), node('Reshape', ['y4', 'merged'], ['mixed']));
}
function model(c, H, causal, fused) {
  const [B, T, D] = c.X.shape, g = { nodes: [], init: [] };
  for (const p of ['q', 'k', 'v']) linear(g, c, p, 'X', p);
  if (fused) attentionFused(g, H, causal); else attentionPlain(g, B, T, D, H, causal);
  linear(g, c, 'o', 'mixed', 'Y');
  const io = (name) => onnx.ValueInfoProto.create({ name,
    type: { tensorType: { elemType: F, shape: { dim: [B, T, D].map((d) => ({ dimValue: d })) } } } });
  const graph = onnx.GraphProto.create({ name: 'MultiHeadAttention', node: g.nodes, initializer: g.init,
    input: [io('X')], output: [io('Y')] });
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, producerName: 'attention-by-hand',
    graph, opsetImport: [{ domain: '', version: 17 }, { domain: 'com.microsoft', version: 1 }] })).finish();
}

// ---- running and timing ------------------------------------------------------------
const session = (bytes, threads) => ort.InferenceSession.create(bytes,
  { intraOpNumThreads: threads, interOpNumThreads: 1, executionMode: 'sequential', graphOptimizationLevel: 'all' });
const feeds = (c) => ({ X: new ort.Tensor('float32', c.X.data, c.X.shape) });
const median = (t) => { const s = [...t].sort((a, b) => a - b); return s[s.length >> 1]; };
// one run for the page faults, then the median of `runs` warm runs, in ms
async function timeOrt(sess, c, runs) {
  const f = feeds(c), t = [];
  await sess.run(f);
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    await sess.run(f);
    t.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(t);
}
// mha_bench --load: the fastest rung, its median ms and its fraction of the measured peak
function timeOurs(dir, H, causal, threads, runs, out) {
  const args = ['--load', dir, '--heads', `${H}`, '--threads', `${threads}`, '--runs', `${runs}`];
  if (causal) args.push('--causal');
  if (out) args.push('--out', out);
  // under make test-valgrind, ABH_WRAP runs it under valgrind, as every test runs the programs
  const wrap = process.env.ABH_WRAP || '';
  const text = execFileSync('sh', ['-c', `${wrap} "$@"`, 'sh', BENCH, ...args], { encoding: 'utf8' });
  const m = text.match(/median ([\d.]+) ms/), p = text.match(/([\d.]+)% of the peak/);
  if (!m) die(`${BENCH} printed no median: ${text}`);
  return { ms: Number(m[1]), peak: p ? Number(p[1]) : null };
}
const worst = (a, b) => a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i])), 0);

async function check() {
  if (!fs.existsSync(BENCH)) die(`no ${BENCH}: make`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'abh-ort-'));
  const cases = [[2, 70, 96, 4], [1, 130, 128, 2], [3, 1, 48, 3], [1, 200, 768, 12]];
  let n = 0, failed = 0;
  try {
    for (const [B, T, D, H] of cases) {
      const dir = path.join(tmp, `${B}-${T}-${D}-${H}`), c = writeCase(dir, B, T, D, T);
      for (const causal of [false, true]) {
        const out = path.join(dir, `out${causal ? '-causal' : ''}.npy`);
        timeOurs(dir, H, causal, 1, 1, out);
        const ours = npyRead(out).data;
        for (const fused of [true, false]) {
          const y = (await (await session(model(c, H, causal, fused), 1)).run(feeds(c))).Y.data;
          const w = worst(ours, y), ok = w <= 1e-5;
          n++; if (!ok) failed++;
          console.log(`${ok ? 'ok' : 'not ok'} ${n} - ONNX Runtime's ${fused ? 'fused MultiHeadAttention' : 'plain-operator graph'}` +
            ` gives mha_fast's output at B = ${B}, T = ${T}, D = ${D}, H = ${H}${causal ? ', causal' : ''} (worst ${w.toExponential(1)})`);
        }
      }
    }
  } finally { fs.rmSync(tmp, { recursive: true, force: true }); }
  console.log(`1..${n}`);
  process.exit(failed ? 1 : 0);
}

async function bench(rounds) {
  if (!fs.existsSync(BENCH)) die(`no ${BENCH}: make`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'abh-ort-'));
  const cores = Math.min(os.availableParallelism ? os.availableParallelism() : os.cpus().length, 2);
  const RUNS = 9;
  console.log(`ONNX Runtime ${ort.env.versions?.common ?? ''} (onnxruntime-node, CPU) against mha_fast's fastest rung, B = 1, D = 768, H = 12`);
  console.log(`each time the median of ${RUNS} warm runs; ${rounds} rounds, one after the other; ratio = ONNX Runtime's fused / ours, in the same round`);
  try {
    for (const T of [1024, 4096]) {
      const dir = path.join(tmp, `${T}`), c = writeCase(dir, 1, T, 768, T);
      for (const causal of [false, true]) {
        // the outputs agree at the shape timed, once
        const out = path.join(dir, 'out.npy');
        timeOurs(dir, 12, causal, 1, 1, out);
        const fusedBytes = model(c, 12, causal, true), plainBytes = model(c, 12, causal, false);
        const check = (await (await session(fusedBytes, 1)).run(feeds(c))).Y.data;
        const w = worst(npyRead(out).data, check);
        if (w > 1e-5) die(`T = ${T}${causal ? ', causal' : ''}: ONNX Runtime's output differs from mha_fast's by ${w}`);
        console.log(`\nT = ${T}${causal ? ', causal' : ''} (outputs agree within ${w.toExponential(1)})`);
        console.log('threads  round   ORT plain   ORT fused    mha_fast   of peak   fused / ours');
        for (let th = 1; th <= cores; th++) {
          const fused = await session(fusedBytes, th), plain = await session(plainBytes, th);
          for (let r = 1; r <= rounds; r++) {
            const p = await timeOrt(plain, c, RUNS), f = await timeOrt(fused, c, RUNS);
            const ours = timeOurs(dir, 12, causal, th, RUNS, null);
            console.log(`${String(th).padStart(7)} ${String(r).padStart(6)} ${p.toFixed(1).padStart(11)} ${f.toFixed(1).padStart(11)}` +
              ` ${ours.ms.toFixed(1).padStart(11)} ${(ours.peak === null ? '-' : `${ours.peak.toFixed(0)}%`).padStart(9)}` +
              ` ${(f / ours.ms).toFixed(2).padStart(13)}x`);
          }
          await fused.release(); await plain.release();
        }
      }
    }
  } finally { fs.rmSync(tmp, { recursive: true, force: true }); }
}

const [mode, arg] = process.argv.slice(2);
if (mode === 'check') await check();
else if (mode === 'bench') {
  const rounds = arg === undefined ? 3 : Number(arg);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) die(`${arg}: ROUNDS is a number of rounds, 1 to 20`);
  await bench(rounds);
} else die('usage: node tools/onnxruntime.mjs check | bench [ROUNDS]');
