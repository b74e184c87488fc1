// wasm_test.mjs: every program's WebAssembly build (make html's, for the pages'
// panels) prints what the native program prints and dumps the same .npy bytes.
//
//   node tests/wasm_test.mjs build/bin build/site/wasm selfatt_v1 mha ...   (make check-wasm)
//
// Each program is run on the cases the native tests run (tests/cli_test.lua):
// its defaults, each example its --help lists, --causal when it has the flag,
// each with --dump; and a refusal (an example that does not exist). Every case
// runs three ways: natively (build/bin), under node's own node:wasi, and under
// the book's layer (tools/site/wasi.mjs, what the page runs). Stdout, stderr,
// the exit status and every dumped file must be byte-identical across the
// three (but for the C library's differences named in LIBM below), and what the
// layer streams to onWrite as it is written adds up to what it returns. A trainer (a program whose --help lists --steps) trains 20 steps.
// TAP on stdout.

import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { WASI } from "node:wasi";
import { run } from "../tools/site/wasi.mjs";

const [bin, wasmDir, ...programs] = process.argv.slice(2);
let n = 0, failed = 0;
const ok = (good, name, ...diag) => {
  n++;
  console.log(`${good ? "ok" : "not ok"} ${n} - ${name}`);
  if (!good) { failed++; for (const d of diag) console.log(String(d).replace(/^/gm, "#   ")); }
};
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "abh-wasm-"));

// Every file under dir, as { "relative/path": Buffer }.
function tree(dir, prefix = "") {
  const out = {};
  for (const e of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name < b.name ? -1 : 1)) {
    const rel = prefix + e.name;
    if (e.isDirectory()) Object.assign(out, tree(path.join(dir, e.name), rel + "/"));
    else out[rel] = fs.readFileSync(path.join(dir, e.name));
  }
  return out;
}

function runNative(name, args, dir) {
  const r = spawnSync(path.resolve(bin, name), args, { cwd: dir, encoding: "latin1" });
  return { stdout: r.stdout, stderr: r.stderr, status: r.status, files: tree(dir) };
}

function runNodeWasi(module, name, args, dir) {
  const outPath = path.join(tmp, "stdout"), errPath = path.join(tmp, "stderr");
  const out = fs.openSync(outPath, "w"), err = fs.openSync(errPath, "w");
  const wasi = new WASI({ version: "preview1", args: [name, ...args], env: {}, preopens: { "/": dir },
                          returnOnExit: true, stdin: 0, stdout: out, stderr: err });
  const instance = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasi.wasiImport });
  const status = wasi.start(instance);
  fs.closeSync(out); fs.closeSync(err);
  return { stdout: fs.readFileSync(outPath, "latin1"), stderr: fs.readFileSync(errPath, "latin1"), status,
           files: tree(dir) };
}

async function runOurs(module, name, args) {
  // what the layer hands onWrite as the program writes must add up to what it returns
  const streamed = { 1: "", 2: "" };
  const r = await run(module, [name, ...args], {}, { onWrite: (fd, text) => { streamed[fd] += text; } });
  if (streamed[1] !== r.stdout) r.stdout = "(onWrite saw another stdout: " + streamed[1] + ")";
  if (streamed[2] !== r.stderr) r.stderr = "(onWrite saw another stderr: " + streamed[2] + ")";
  const latin1 = s => Buffer.from(s, "utf8").toString("latin1");
  const files = {};
  for (const [p, data] of Object.entries(r.files)) files[p] = Buffer.from(data);
  return { stdout: latin1(r.stdout), stderr: latin1(r.stderr), status: r.status, files };
}

// Where two runs differ, in words (empty when they are the same).
function differences(a, b) {
  const d = [];
  for (const k of ["stdout", "stderr", "status"]) {
    if (a[k] === b[k]) continue;
    const la = String(a[k]).split("\n"), lb = String(b[k]).split("\n");
    const i = la.findIndex((line, j) => line !== lb[j]);
    d.push(`${k}, line ${i + 1}: ${JSON.stringify(la[i])} natively, ${JSON.stringify(lb[i])} in WebAssembly`);
  }
  const names = new Set([...Object.keys(a.files), ...Object.keys(b.files)]);
  for (const f of names) {
    if (!a.files[f] || !b.files[f]) d.push(`${f}: written by one run only`);
    else if (!a.files[f].equals(b.files[f])) d.push(`${f}: the bytes differ`);
  }
  return d;
}

// The differences that are named, not bugs: the C library's. wasi-libc's sinf (musl's)
// and glibc's differ in the last bit on a few arguments (sinf(34.0f): 0x3f0771f6
// natively, 0x3f0771f7 in WebAssembly); a program that turns by its positions and then
// trains carries that bit into every weight. For these, the two WebAssembly runs (node's
// WASI and the page's layer) must agree byte for byte, and the native run agree with them
// in everything but the numbers, each within NEAR (relative, or absolute below 1).
const LIBM = {
  rope_induction: "sinf of wasi-libc and of glibc differ in the last bit on a few angles, and training carries it into every weight",
};
const NEAR = 1e-3;
const near = (x, y) => Math.abs(x - y) <= NEAR * Math.max(1, Math.abs(x), Math.abs(y)) || (isNaN(x) && isNaN(y));
// Where a native and a WebAssembly run differ beyond the numbers' last bits (empty when they do not).
function farther(a, b) {
  const d = [];
  const num = /-?\d+(?:\.\d+)?(?:e[-+]?\d+)?/g;
  for (const k of ["stdout", "stderr"]) {
    const ta = String(a[k]).split(num), tb = String(b[k]).split(num);
    const na = String(a[k]).match(num) || [], nb = String(b[k]).match(num) || [];
    if (ta.join("|") !== tb.join("|") || na.length !== nb.length) d.push(`${k}: the text differs, not only its numbers`);
    else na.forEach((x, i) => { if (!near(+x, +nb[i])) d.push(`${k}: ${x} natively, ${nb[i]} in WebAssembly`); });
  }
  if (a.status !== b.status) d.push(`status: ${a.status} natively, ${b.status} in WebAssembly`);
  const names = new Set([...Object.keys(a.files), ...Object.keys(b.files)]);
  for (const f of names) {
    const fa = a.files[f], fb = b.files[f];
    if (!fa || !fb) { d.push(`${f}: written by one run only`); continue; }
    const start = fa[6] === 1 ? 10 + fa.readUInt16LE(8) : 12 + fa.readUInt32LE(8);
    if (!f.endsWith(".npy") || fa.length !== fb.length || !fa.subarray(0, start).equals(fb.subarray(0, start))) {
      if (!fa.equals(fb)) d.push(`${f}: the header or the length differs`);
      continue;
    }
    for (let i = start; i + 4 <= fa.length; i += 4)
      if (!near(fa.readFloatLE(i), fb.readFloatLE(i))) { d.push(`${f}: float ${(i - start) / 4} is ${fa.readFloatLE(i)} natively, ${fb.readFloatLE(i)} in WebAssembly`); break; }
  }
  return d;
}

console.log("TAP version 13");
const started = Date.now();
for (const name of programs) {
  const file = path.join(wasmDir, name + ".wasm");
  if (!fs.existsSync(file)) { ok(false, `${name}: ${file} was built`); continue; }
  const module = await WebAssembly.compile(fs.readFileSync(file));
  const usage = spawnSync(path.resolve(bin, name), ["--help"], { encoding: "utf8" }).stdout;
  const flags = new Set(usage.match(/^  --[\w-]+/gm).map(f => f.trim()));
  const examples = [];
  let inExamples = false;
  for (const line of usage.split("\n")) {
    if (/^\S/.test(line)) inExamples = line === "examples:";
    const m = inExamples && line.match(/^  ([\w-]+)\s/);
    if (m) examples.push(m[1]);
  }
  const extra = flags.has("--steps") ? ["--steps", "20", "--every", "10"] : [];
  const cases = [["--help"], [...extra]];
  for (const e of examples) cases.push(["--example", e]);
  if (flags.has("--causal")) cases.push(["--causal", ...extra]);
  if (flags.has("--example")) cases.push(["--example", "no-such-case"]);
  for (const args0 of cases) {
    const args = flags.has("--dump") && args0[0] !== "--help" ? [...args0, "--dump", "run"] : args0;
    const dirs = ["native", "node"].map(k => { const d = path.join(tmp, k); fs.rmSync(d, { recursive: true, force: true }); fs.mkdirSync(d); return d; });
    const native = runNative(name, args, dirs[0]);
    const nodeWasi = runNodeWasi(module, name, args, dirs[1]);
    const ours = await runOurs(module, name, args);
    const what = `${name} ${args.join(" ")}`.trim();
    const files = Object.keys(native.files).length;
    if (LIBM[name] && differences(native, nodeWasi).length) {
      ok(differences(nodeWasi, ours).length === 0, `${what}: the page's WASI layer prints and dumps what node:wasi does, byte for byte`,
         ...differences(nodeWasi, ours));
      ok(farther(native, nodeWasi).length === 0, `${what}: and the native program's text and files, every number within ${NEAR}`,
         ...farther(native, nodeWasi));
      console.log(`# ${what}: not the native bytes, for a named reason: ${LIBM[name]}`);
      continue;
    }
    ok(differences(native, nodeWasi).length === 0, `${what}: node:wasi prints and dumps what the native program does (${files} files)`,
       ...differences(native, nodeWasi));
    ok(differences(native, ours).length === 0, `${what}: the page's WASI layer prints and dumps the same`,
       ...differences(native, ours));
  }
}
fs.rmSync(tmp, { recursive: true, force: true });
console.log(`1..${n}`);
console.log(`# ${programs.length} programs, ${n} checks in ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(failed ? 1 : 0);
