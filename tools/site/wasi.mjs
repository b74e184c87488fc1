// wasi.mjs: the few WASI calls (wasi_snapshot_preview1) the book's programs make,
// over a file system held in memory, so that a program compiled to wasm32-wasi
// runs in the reader's page (and in node, where tests/wasm_test.mjs holds it to
// node's own node:wasi and to the native program).
//
//   const { stdout, stderr, status, files } = await run(wasmBytes, ["mha", "--dump", "out"], {});
//
// args: argv, argv[0] the program's name. files: { "path": Uint8Array } the
// program finds (paths relative to its working directory, "/"). It returns what
// the program wrote to stdout and stderr (text), its exit status, and every file
// in memory when it ended ({ "out/attn.npy": Uint8Array, ... }). options.onWrite,
// if given, is called with (fd, text) as the program writes to stdout (1) or
// stderr (2), so that a long run's progress can be shown as it is printed.
// One directory is preopened, "/" (fd 3); fds 0, 1, 2 are stdin (empty),
// stdout and stderr. A call the programs never make answers ENOSYS.
// make html turns this module into a classic script (build/site/run/panel.js).

const E = { SUCCESS: 0, ACCES: 2, BADF: 8, EXIST: 20, INVAL: 28, ISDIR: 31, NOENT: 44, NOSYS: 52,
            NOTDIR: 54, NOTEMPTY: 55, SPIPE: 70 };
const FILETYPE = { CHAR: 2, DIR: 3, FILE: 4 };
const OFLAGS = { CREAT: 1, DIRECTORY: 2, EXCL: 4, TRUNC: 8 };
const APPEND = 1;
const ALL_RIGHTS = 0x1fffffffn;

class Exit extends Error {
  constructor(status) { super("exit " + status); this.status = status; }
}

// ---- the file system: "a/b.npy" -> { dir: true } or { data: Uint8Array } ----

// A path made absolute against base and normalised: no ".", "..", "" parts.
function resolve(base, path) {
  const parts = path.startsWith("/") ? [] : base.split("/").filter(Boolean);
  for (const p of path.split("/")) {
    if (p === "" || p === ".") continue;
    if (p === "..") parts.pop(); else parts.push(p);
  }
  return parts.join("/");
}
const parent = path => path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "";

class MemFS {
  constructor(files) {
    this.nodes = new Map([["", { dir: true }]]);
    for (const [path, data] of Object.entries(files || {})) {
      const p = resolve("", path);
      for (let d = parent(p); d !== ""; d = parent(d)) this.nodes.set(d, { dir: true });
      this.nodes.set(p, { data: Uint8Array.from(data) });
    }
  }
  files() {
    const out = {};
    for (const [path, node] of [...this.nodes].sort(([a], [b]) => a < b ? -1 : 1))
      if (!node.dir) out[path] = node.data;
    return out;
  }
  children(path) {
    const prefix = path === "" ? "" : path + "/";
    return [...this.nodes.keys()].filter(k => k !== path && k.startsWith(prefix));
  }
}

// ---- the program's run ----------------------------------------------------

export async function run(wasmBytes, args, files, options) {
  const onWrite = options && options.onWrite;
  const streams = onWrite && { 1: new TextDecoder(), 2: new TextDecoder() };
  const fs = new MemFS(files);
  const out = { 1: [], 2: [] };
  // open descriptors: fd -> { path, node, pos, append } (3 is the preopened "/")
  const fds = new Map([[0, { tty: true }], [1, { tty: true }], [2, { tty: true }], [3, { path: "", node: fs.nodes.get("") }]]);
  let nextFd = 4, memory;
  const view = () => new DataView(memory.buffer);
  const bytes = (ptr, len) => new Uint8Array(memory.buffer, ptr, len);
  const text = (ptr, len) => new TextDecoder().decode(bytes(ptr, len).slice());
  const argBytes = args.map(a => new TextEncoder().encode(a + "\0"));

  // The iovecs of a read or write: [{ ptr, len }] from (buf u32, len u32) pairs.
  const iovecs = (iovs, n) => Array.from({ length: n }, (_, i) =>
    ({ ptr: view().getUint32(iovs + 8 * i, true), len: view().getUint32(iovs + 8 * i + 4, true) }));
  // The path a call names, against the directory fd it names (or an errno).
  const at = (dirfd, ptr, len) => {
    const d = fds.get(dirfd);
    if (!d || d.tty) return E.BADF;
    if (!d.node.dir) return E.NOTDIR;
    return resolve(d.path, text(ptr, len));
  };
  const filestat = (ptr, node) => {
    const v = view();
    for (let i = 0; i < 64; i += 8) v.setBigUint64(ptr + i, 0n, true);
    v.setUint8(ptr + 16, node.tty ? FILETYPE.CHAR : node.dir ? FILETYPE.DIR : FILETYPE.FILE);
    v.setBigUint64(ptr + 24, 1n, true);
    v.setBigUint64(ptr + 32, BigInt(node.data ? node.data.length : 0), true);
    return E.SUCCESS;
  };

  const wasi = {
    args_sizes_get(argc, size) {
      view().setUint32(argc, args.length, true);
      view().setUint32(size, argBytes.reduce((n, b) => n + b.length, 0), true);
      return E.SUCCESS;
    },
    args_get(argv, buf) {
      for (const [i, b] of argBytes.entries()) {
        view().setUint32(argv + 4 * i, buf, true);
        bytes(buf, b.length).set(b);
        buf += b.length;
      }
      return E.SUCCESS;
    },
    environ_sizes_get(count, size) {
      view().setUint32(count, 0, true);
      view().setUint32(size, 0, true);
      return E.SUCCESS;
    },
    environ_get() { return E.SUCCESS; },
    clock_time_get(id, precision, time) {
      const ns = BigInt(Math.round((globalThis.performance ? performance.now() : Date.now()) * 1e6));
      view().setBigUint64(time, id === 0 ? BigInt(Date.now()) * 1000000n : ns, true);
      return E.SUCCESS;
    },
    random_get(buf, len) {
      crypto.getRandomValues(bytes(buf, len));
      return E.SUCCESS;
    },
    proc_exit(status) { throw new Exit(status); },

    fd_prestat_get(fd, buf) {
      if (fd !== 3) return E.BADF;
      view().setUint8(buf, 0);
      view().setUint32(buf + 4, 1, true);
      return E.SUCCESS;
    },
    fd_prestat_dir_name(fd, ptr, len) {
      if (fd !== 3) return E.BADF;
      bytes(ptr, len).set(new TextEncoder().encode("/").subarray(0, len));
      return E.SUCCESS;
    },
    fd_fdstat_get(fd, buf) {
      const f = fds.get(fd);
      if (!f) return E.BADF;
      const v = view();
      v.setUint8(buf, f.tty ? FILETYPE.CHAR : f.node.dir ? FILETYPE.DIR : FILETYPE.FILE);
      v.setUint16(buf + 2, f.append ? APPEND : 0, true);
      v.setBigUint64(buf + 8, ALL_RIGHTS, true);
      v.setBigUint64(buf + 16, ALL_RIGHTS, true);
      return E.SUCCESS;
    },
    fd_fdstat_set_flags(fd) { return fds.has(fd) ? E.SUCCESS : E.BADF; },
    fd_filestat_get(fd, buf) {
      const f = fds.get(fd);
      if (!f) return E.BADF;
      return filestat(buf, f.tty ? f : f.node);
    },

    fd_write(fd, iovs, n, written) {
      const f = fds.get(fd);
      if (!f) return E.BADF;
      let total = 0;
      for (const { ptr, len } of iovecs(iovs, n)) {
        const chunk = bytes(ptr, len).slice();
        total += len;
        if (f.tty) {
          if (out[fd]) { out[fd].push(chunk); if (onWrite) onWrite(fd, streams[fd].decode(chunk, { stream: true })); }
          continue;
        }
        if (f.node.dir) return E.ISDIR;
        const pos = f.append ? f.node.data.length : f.pos;
        if (pos + len > f.node.data.length) {
          const grown = new Uint8Array(Math.max(pos + len, 2 * f.node.data.length));
          grown.set(f.node.data);
          f.node.data = grown.subarray(0, pos + len);
        }
        f.node.data.set(chunk, pos);
        f.pos = pos + len;
      }
      view().setUint32(written, total, true);
      return E.SUCCESS;
    },
    fd_read(fd, iovs, n, nread) {
      const f = fds.get(fd);
      if (!f) return E.BADF;
      let total = 0;
      if (!f.tty) {
        if (f.node.dir) return E.ISDIR;
        for (const { ptr, len } of iovecs(iovs, n)) {
          const chunk = f.node.data.subarray(f.pos, f.pos + len);
          bytes(ptr, chunk.length).set(chunk);
          f.pos += chunk.length;
          total += chunk.length;
          if (chunk.length < len) break;
        }
      }
      view().setUint32(nread, total, true);
      return E.SUCCESS;
    },
    fd_seek(fd, offset, whence, newOffset) {
      const f = fds.get(fd);
      if (!f) return E.BADF;
      if (f.tty) return E.SPIPE;
      const base = [0, f.pos, f.node.data ? f.node.data.length : 0][whence];
      const pos = base + Number(offset);
      if (base === undefined || pos < 0) return E.INVAL;
      f.pos = pos;
      view().setBigUint64(newOffset, BigInt(pos), true);
      return E.SUCCESS;
    },
    fd_close(fd) {
      if (!fds.has(fd) || fd === 3) return E.BADF;
      fds.delete(fd);
      return E.SUCCESS;
    },

    path_open(dirfd, dirflags, ptr, len, oflags, rightsBase, rightsInheriting, fdflags, fdOut) {
      const path = at(dirfd, ptr, len);
      if (typeof path === "number") return path;
      let node = fs.nodes.get(path);
      if (node && (oflags & OFLAGS.CREAT) && (oflags & OFLAGS.EXCL)) return E.EXIST;
      if (!node) {
        if (!(oflags & OFLAGS.CREAT)) return E.NOENT;
        const dir = fs.nodes.get(parent(path));
        if (!dir) return E.NOENT;
        if (!dir.dir) return E.NOTDIR;
        node = { data: new Uint8Array(0) };
        fs.nodes.set(path, node);
      }
      if ((oflags & OFLAGS.DIRECTORY) && !node.dir) return E.NOTDIR;
      if (node.dir && (rightsBase & 0x40n)) return E.ISDIR;            // opened to write
      if (!node.dir && (oflags & OFLAGS.TRUNC)) node.data = new Uint8Array(0);
      const fd = nextFd++;
      fds.set(fd, { path, node, pos: 0, append: (fdflags & APPEND) !== 0 });
      view().setUint32(fdOut, fd, true);
      return E.SUCCESS;
    },
    path_filestat_get(dirfd, flags, ptr, len, buf) {
      const path = at(dirfd, ptr, len);
      if (typeof path === "number") return path;
      const node = fs.nodes.get(path);
      return node ? filestat(buf, node) : E.NOENT;
    },
    path_create_directory(dirfd, ptr, len) {
      const path = at(dirfd, ptr, len);
      if (typeof path === "number") return path;
      if (fs.nodes.has(path)) return E.EXIST;
      const dir = fs.nodes.get(parent(path));
      if (!dir) return E.NOENT;
      if (!dir.dir) return E.NOTDIR;
      fs.nodes.set(path, { dir: true });
      return E.SUCCESS;
    },
    path_remove_directory(dirfd, ptr, len) {
      const path = at(dirfd, ptr, len);
      if (typeof path === "number") return path;
      const node = fs.nodes.get(path);
      if (!node) return E.NOENT;
      if (!node.dir) return E.NOTDIR;
      if (fs.children(path).length) return E.NOTEMPTY;
      fs.nodes.delete(path);
      return E.SUCCESS;
    },
    path_unlink_file(dirfd, ptr, len) {
      const path = at(dirfd, ptr, len);
      if (typeof path === "number") return path;
      const node = fs.nodes.get(path);
      if (!node) return E.NOENT;
      if (node.dir) return E.ISDIR;
      fs.nodes.delete(path);
      return E.SUCCESS;
    },
    path_rename(fromFd, fromPtr, fromLen, toFd, toPtr, toLen) {
      const from = at(fromFd, fromPtr, fromLen), to = at(toFd, toPtr, toLen);
      if (typeof from === "number") return from;
      if (typeof to === "number") return to;
      const node = fs.nodes.get(from);
      if (!node) return E.NOENT;
      if (node.dir) return E.NOSYS;                     // the programs rename files only
      if (!fs.nodes.get(parent(to))) return E.NOENT;
      if (fs.nodes.get(to) && fs.nodes.get(to).dir) return E.ISDIR;
      fs.nodes.delete(from);
      fs.nodes.set(to, node);
      return E.SUCCESS;
    },
  };
  // Any other call of preview1: ENOSYS, as a WASI without it would answer.
  const imports = new Proxy(wasi, { get: (t, name) => t[name] || (() => E.NOSYS) });

  const module = wasmBytes instanceof WebAssembly.Module ? wasmBytes : await WebAssembly.compile(wasmBytes);
  const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: imports });
  memory = instance.exports.memory;
  let status = 0;
  try {
    instance.exports._start();
  } catch (e) {
    if (!(e instanceof Exit)) throw e;
    status = e.status;
  }
  const decode = chunks => new TextDecoder().decode(concat(chunks));
  return { stdout: decode(out[1]), stderr: decode(out[2]), status, files: fs.files() };
}

function concat(chunks) {
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.length; }
  return all;
}
