// panel.js: the "Run it here" panel of a chapter page (make html appends it to
// tools/site/wasi.mjs, made a classic script, as build/site/run/panel.js; the
// page loads it when the reader first opens the panel).
//
// The panel knows nothing of a program but its name: it runs `NAME --help` to
// learn its flags, examples and defaults, offers them, runs the program as the
// reader asks with `--dump run`, shows its printout and the command line they
// would type at home, and draws run/attn.npy as the figures draw attention maps
// (tools/heatmap.gp: queries down, keys across, the viridis-like palette, a
// hidden key grey and hatched). A program's WebAssembly is run/NAME.js, loaded
// by a <script> tag (so that it works from file://) the first time it is run.
"use strict";
(function () {
  const wasm = {};                     // name -> Promise of its WebAssembly.Module
  const waiting = {};                  // name -> resolve, until run/NAME.js calls abhWasm
  globalThis.abhWasm = (name, base64) => {
    const bytes = Uint8Array.from(atob(base64), c => c.charCodeAt(0));
    if (waiting[name]) waiting[name](WebAssembly.compile(bytes));
  };
  function program(name) {
    if (!wasm[name]) wasm[name] = new Promise((resolve, reject) => {
      waiting[name] = resolve;
      const s = document.createElement("script");
      s.src = "run/" + name + ".js";
      s.onerror = () => reject(new Error("run/" + name + ".js is missing: make html builds it"));
      document.head.appendChild(s);
    }).then(p => p);
    return wasm[name];
  }

  // ---- a run in a worker, so that the page stays responsive and a run can be
  // stopped; the worker is made from abhWasiLayer's own source (a Blob, which
  // works from file://). Where workers fail, the run is made in the page.
  let workerURL = null;
  function workerSource() {
    return abhWasiLayer.toString() + "\nconst run = abhWasiLayer();\n" +
      "onmessage = async (e) => {\n" +
      "  try { postMessage({ result: await run(e.data.module, e.data.args, {}) }); }\n" +
      "  catch (err) { postMessage({ error: String(err && err.message || err) }); }\n};\n";
  }
  function runInWorker(module, args, stopButton) {
    try {
      workerURL = workerURL || URL.createObjectURL(new Blob([workerSource()], { type: "text/javascript" }));
      const worker = new Worker(workerURL);
      return new Promise((resolve, reject) => {
        const done = () => { worker.terminate(); stopButton.hidden = true; stopButton.onclick = null; };
        worker.onmessage = (e) => { done(); stopButton.closest("details").dataset.ranIn = "worker"; e.data.error ? reject(new Error(e.data.error)) : resolve(e.data.result); };
        worker.onerror = (e) => { done(); e.preventDefault(); reject(new Error(e.message || "the worker failed")); };
        stopButton.hidden = false;
        stopButton.onclick = () => { done(); resolve({ stdout: "", stderr: "", status: null, files: {}, stopped: true }); };
        worker.postMessage({ module, args });
      });
    } catch (e) {
      return abhRun(module, args, {});
    }
  }

  // ---- the program's --help: its flags, examples and defaults ----
  const SKIP = new Set(["--load", "--dump", "--example", "--quiet", "--help"]);
  function readUsage(text) {
    const flags = [], examples = [], defaults = {};
    let inExamples = false;
    for (const line of text.split("\n")) {
      if (/^\S/.test(line)) inExamples = line === "examples:";
      const f = line.match(/^  (--[\w-]+) ?([A-Z]*)\s+(.*)$/);
      if (f && !SKIP.has(f[1])) flags.push({ name: f[1], value: f[2], doc: f[3] });
      const e = inExamples && line.match(/^  ([\w-]+)\s+(.*)$/);
      if (e) examples.push({ name: e[1], doc: e[2] });
      const d = line.match(/^defaults: (.*)/);
      if (d) for (const [, k, v] of d[1].matchAll(/(--[\w-]+) (\S+)/g)) defaults[k] = v;
    }
    return { flags, examples, defaults };
  }

  // ---- .npy (float32, little-endian, C order) ----
  function readNpy(bytes) {
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const major = bytes[6];
    const len = major === 1 ? v.getUint16(8, true) : v.getUint32(8, true);
    const start = major === 1 ? 10 : 12;
    const header = new TextDecoder().decode(bytes.subarray(start, start + len));
    if (!/'descr':\s*'<f4'/.test(header)) return null;
    const shape = (header.match(/'shape':\s*\(([^)]*)\)/)[1].match(/\d+/g) || []).map(Number);
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = v.getFloat32(start + len + 4 * i, true);
    return { shape, data };
  }

  // seen[i] for every weight i: 0 where the mask (broadcast from the right, as
  // masked_fill does) is 0, or --causal hides key s > query t; else 1.
  function seenKeys(w, mask, causal) {
    const seen = new Uint8Array(w.data.length).fill(1);
    const nd = w.shape.length, T = w.shape[nd - 2], S = w.shape[nd - 1];
    const ok = mask && mask.shape.length <= nd &&
      mask.shape.every((m, i) => m === 1 || m === w.shape[nd - mask.shape.length + i]);
    for (let i = 0; i < seen.length; i++) {
      if (causal && i % S > Math.floor(i / S) % T) seen[i] = 0;
      if (ok) {
        let rest = i, at = 0, stride = 1;
        for (let a = nd - 1; a >= nd - mask.shape.length; a--) {
          const coord = rest % w.shape[a];
          rest = Math.floor(rest / w.shape[a]);
          const m = mask.shape[a - (nd - mask.shape.length)];
          at += (m === 1 ? 0 : coord) * stride;
          stride *= m;
        }
        if (mask.data[at] === 0) seen[i] = 0;
      }
    }
    return seen;
  }

  // ---- drawing: tools/heatmap.gp's palette and marks, in SVG ----
  const STOPS = [[0, 0x44, 0x01, 0x54], [0.25, 0x3b, 0x52, 0x8b], [0.5, 0x21, 0x91, 0x8c],
                 [0.75, 0x5e, 0xc9, 0x62], [1, 0xfd, 0xe7, 0x25]];
  function colour(v) {
    v = Math.min(1, Math.max(0, v));
    let k = 0;
    while (k < STOPS.length - 2 && v > STOPS[k + 1][0]) k++;
    const [a, b] = [STOPS[k], STOPS[k + 1]], t = (v - a[0]) / (b[0] - a[0]);
    return "rgb(" + [1, 2, 3].map(j => Math.round(a[j] + t * (b[j] - a[j]))).join(",") + ")";
  }
  let patterns = 0;
  const NS = "http://www.w3.org/2000/svg";
  function el(tag, attrs, parent) {
    const e = document.createElementNS(NS, tag);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  // One (T, S) map: weights w.data[off ...], seen likewise, titled.
  function drawMap(w, seen, off, title) {
    const nd = w.shape.length, T = w.shape[nd - 2], S = w.shape[nd - 1];
    const cell = Math.max(14, Math.min(44, Math.floor(320 / Math.max(T, S))));
    const left = 34, top = 26, width = left + S * cell + 6, height = top + T * cell + 34;
    const svg = el("svg", { viewBox: `0 0 ${width} ${height}`, width, height, class: "run-map", role: "img",
                            "aria-label": title });
    const id = "abh-hatch-" + (++patterns);
    const defs = el("defs", {}, svg);
    for (const [suffix, stroke] of [["", "#7a7a7a"], ["-leak", "#ffffff"]]) {
      const p = el("pattern", { id: id + suffix, patternUnits: "userSpaceOnUse", width: 6, height: 6 }, defs);
      el("path", { d: "M-1,1 l2,-2 M0,6 l6,-6 M5,7 l2,-2", stroke, "stroke-width": 1.2 }, p);
    }
    el("text", { x: left, y: 16, class: "run-map-title" }, svg).textContent = title;
    const label = cell >= 28;
    for (let t = 0; t < T; t++) {
      for (let s = 0; s < S; s++) {
        const i = off + t * S + s, v = w.data[i], hidden = !seen[i];
        const x = left + s * cell, y = top + t * cell;
        const r = el("rect", { x, y, width: cell, height: cell, class: "run-cell", "data-q": t, "data-k": s,
                               "data-value": String(v), "data-hidden": hidden ? 1 : 0,
                               fill: v !== v ? "#ffffff" : hidden && v === 0 ? "#d4d4d4" : colour(v) }, svg);
        el("title", {}, r).textContent = `query ${t}, key ${s}: ${v}` + (hidden ? " (hidden)" : "");
        if (hidden) el("rect", { x, y, width: cell, height: cell, fill: `url(#${id}${v === 0 ? "" : "-leak"})`,
                                 "pointer-events": "none" }, svg);
        const text = v !== v ? "NaN" : v === 0 ? (hidden ? "" : "0") : v.toFixed(2);
        if (label && text)
          el("text", { x: x + cell / 2, y: y + cell / 2 + 4, "text-anchor": "middle", class: "run-cell-text",
                       fill: v === v && v < 0.6 ? "#ffffff" : "#000000" }, svg).textContent = text;
      }
    }
    for (let s = 0; s < S; s++)
      el("text", { x: left + s * cell + cell / 2, y: top + T * cell + 14, "text-anchor": "middle",
                   class: "run-axis" }, svg).textContent = s;
    for (let t = 0; t < T; t++)
      el("text", { x: left - 6, y: top + t * cell + cell / 2 + 4, "text-anchor": "end", class: "run-axis" }, svg)
        .textContent = t;
    el("text", { x: left + S * cell / 2, y: height - 4, "text-anchor": "middle", class: "run-axis" }, svg)
      .textContent = "key position";
    return svg;
  }

  // Every (T, S) map of one batch element b: one for (B, T, S), H for (B, H, T, S).
  function drawMaps(box, w, seen, b) {
    box.textContent = "";
    const nd = w.shape.length, T = w.shape[nd - 2], S = w.shape[nd - 1];
    const H = nd === 4 ? w.shape[1] : 1;
    for (let h = 0; h < H; h++)
      box.appendChild(drawMap(w, seen, (b * H + h) * T * S, nd === 4 ? `head ${h}` : `sequence ${b}`));
  }

  // ---- the panel ----
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k]; else e.setAttribute(k, attrs[k]);
    }
    for (const c of children) e.append(c);
    return e;
  }
  const quote = a => /^[\w@%+=:,./-]+$/.test(a) ? a : "'" + a.replace(/'/g, "'\\''") + "'";

  async function setUp(panel) {
    const body = panel.querySelector(".run-body");
    const names = panel.dataset.programs.split(/\s+/);
    const ui = h("form", { class: "run-form" });
    body.appendChild(ui);
    const pick = h("select", { name: "program", "aria-label": "program" },
                   ...names.map(n => h("option", { value: n, text: n })));
    const controls = h("div", { class: "run-controls" });
    const runButton = h("button", { type: "submit", class: "run-button", text: "Run" });
    const stopButton = h("button", { type: "button", class: "run-stop", text: "Stop" });
    stopButton.hidden = true;
    const command = h("pre", { class: "run-command" });
    const status = h("p", { class: "run-status", "aria-live": "polite" });
    const batch = h("div", { class: "run-batch" });
    const maps = h("div", { class: "run-maps" });
    const legend = h("p", { class: "run-legend" },
      h("span", { class: "run-bar" }), " weight 0 to 1 ",
      h("span", { class: "run-hidden-swatch" }), " hidden by the mask");
    const output = h("pre", { class: "run-output" });
    ui.append(h("div", { class: "run-row" }, names.length > 1 ? pick : "", controls, runButton, stopButton),
              command, status, batch, maps, legend, output);
    legend.hidden = true;
    let usage;

    async function choose(name) {
      status.textContent = "Loading " + name + "…";
      const module = await program(name);
      const help = await abhRun(module, [name, "--help"], {});
      usage = readUsage(help.stdout);
      controls.textContent = "";
      if (usage.examples.length)
        controls.append(h("label", {}, "case ", h("select", { name: "--example" },
          h("option", { value: "", text: "defaults" }),
          ...usage.examples.map(e => h("option", { value: e.name, text: e.name, title: e.doc })))));
      for (const f of usage.flags) {
        const input = f.value ? h("input", { name: f.name, size: 6, placeholder: usage.defaults[f.name] || "",
                                             inputmode: "decimal", autocomplete: "off" })
                              : h("input", { type: "checkbox", name: f.name });
        controls.append(h("label", { title: f.doc }, f.value ? f.name + " " : "", input, f.value ? "" : " " + f.name));
      }
      status.textContent = "";
      return module;
    }
    let ready = choose(names[0]);
    pick.addEventListener("change", () => { ready = choose(pick.value); });

    ui.addEventListener("submit", async ev => {
      ev.preventDefault();
      const name = names.length > 1 ? pick.value : names[0];
      const module = await ready;
      const args = [];
      for (const input of controls.querySelectorAll("select, input")) {
        if (input.type === "checkbox") { if (input.checked) args.push(input.name); }
        else if (input.value.trim() !== "") args.push(input.name, input.value.trim());
      }
      const argv = [name, ...args, "--dump", "run"];
      command.textContent = "build/bin/" + argv.map(quote).join(" ");
      runButton.disabled = true;
      status.textContent = "Running…";
      const started = performance.now();
      let r;
      try {
        r = await runInWorker(module, argv, stopButton);
      } catch (e) {
        r = { stdout: "", stderr: String(e), status: -1, files: {} };
      }
      const ms = Math.round(performance.now() - started);
      runButton.disabled = false;
      if (r.stopped) {
        status.textContent = `Stopped after ${ms} ms.`;
        output.textContent = "";
        maps.textContent = ""; batch.textContent = ""; legend.hidden = true;
        return;
      }
      output.textContent = r.stdout + r.stderr;
      output.classList.toggle("run-refused", r.status !== 0);
      panel.dataset.status = r.status;
      status.textContent = r.status === 0 ? `Ran in ${ms} ms; exit status 0.`
        : `The program refused (exit status ${r.status}): ${r.stderr.trim().split("\n").pop()}`;
      maps.textContent = ""; batch.textContent = ""; legend.hidden = true;
      const w = r.status === 0 && r.files["run/attn.npy"] && readNpy(r.files["run/attn.npy"]);
      if (!w || w.shape.length < 3) return;
      const mask = r.files["run/attention_mask.npy"] && readNpy(r.files["run/attention_mask.npy"]);
      const seen = seenKeys(w, mask, args.includes("--causal"));
      legend.hidden = false;
      const B = w.shape[0];
      if (B > 1) {
        const sel = h("select", { "aria-label": "sequence" },
                      ...Array.from({ length: B }, (_, b) => h("option", { value: b, text: "sequence " + b })));
        sel.addEventListener("change", () => drawMaps(maps, w, seen, Number(sel.value)));
        batch.append(h("label", {}, "attn.npy, shape (" + w.shape.join(", ") + "): ", sel));
      } else {
        batch.append("attn.npy, shape (" + w.shape.join(", ") + ")");
      }
      drawMaps(maps, w, seen, 0);
      panel.dataset.drawnMs = Math.round(performance.now() - started);
    });
  }

  for (const panel of document.querySelectorAll("details.run-panel")) {
    if (panel.dataset.ready) continue;
    panel.dataset.ready = "1";
    setUp(panel).catch(e => {
      panel.querySelector(".run-body").append(h("p", { class: "run-error", text: String(e.message || e) }));
    });
  }
})();
