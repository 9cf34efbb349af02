// KeyRing.prototype's hot methods (encrypt, decrypt, encryptBinary,
// decryptBinary, searchTokens, searchTokenText) and the process-wide
// functions of the first four's names.
// src/callbacks/install.rs evaluates this file once per module load and
// calls the function it evaluates to with the prototype, the exports, the
// native functions (which nothing else receives) and, on Bun unless
// ALE_BUN_PATH=napi, the path of the addon's own library for bun:ffi. See
// src/callbacks/direct.rs and src/ffi/ for why.
//
// Each method passes the native function:
// - the ring's handle, made once per ring by makeHandle (which checks that
//   `this` is a KeyRing, as every method does) and kept in a WeakMap;
// - the context's handle, made by makeContext (which refuses what a call
//   would refuse, with the same code) the second time a tenant, collection
//   and field are seen, so that a context used once (a per-row field name)
//   costs no handle; undefined otherwise, with the three arguments, which
//   the native function then reads itself.
// With bun:ffi, a call whose ring and context have handles goes through it
// instead: the value is encoded into memory of this closure, ale_ffi names
// the ring and context by the registry tokens of their handles, and the
// result comes back the same way. Anything it does not take (a first
// context, a value that is not a string or is very long, a U+FFFD) goes the
// Node-API way, which decides it exactly.
// The built-ins used are captured here, so that code which later patches
// Map, WeakMap, TextEncoder, Buffer or Math cannot change what a call does.
(function (proto, exports, natives, library) {
  'use strict';
  const { ceil, log2 } = Math;
  const { makeHandle, makeContext, tokenOf, flushWarning, throwError } = natives;
  const uncurry = (f) => Function.prototype.call.bind(f);

  // A subclass whose prototype holds the methods as they are now (like
  // Node's own SafeMap), and that nothing outside this closure can reach.
  function safe(Base, names) {
    const Safe = class extends Base {};
    for (const name of names) {
      Object.defineProperty(Safe.prototype, name, { value: Base.prototype[name] });
    }
    Object.freeze(Safe.prototype);
    return Safe;
  }
  const SafeWeakMap = safe(WeakMap, ['get', 'set']);
  const SafeMap = safe(Map, ['get', 'set', 'clear']);

  const fast = library === undefined ? undefined : bunFfi(library);
  // On the bun:ffi path a handle travels with its token.
  const withToken = fast === undefined ? (handle) => handle : (handle) => ({ handle, token: tokenOf(handle) });

  const handles = new SafeWeakMap();
  function handleOf(ring) {
    let handle = handles.get(ring);
    if (handle === undefined) {
      handle = withToken(makeHandle(ring));
      handles.set(ring, handle);
    }
    return handle;
  }

  // tenant → collection → field → SEEN (once) or the context's handle.
  const SEEN = true;
  const MAX_CONTEXTS = 4096;
  const contexts = new SafeMap();
  let size = 0;
  // The last context handed out, checked first: calls in a row mostly share one.
  let lastTenant, lastCollection, lastField, lastContext;
  function contextOf(tenantId, collectionId, fieldName) {
    if (tenantId === lastTenant && collectionId === lastCollection && fieldName === lastField) return lastContext;
    const context = lookUp(tenantId, collectionId, fieldName);
    if (context !== undefined) {
      lastTenant = tenantId;
      lastCollection = collectionId;
      lastField = fieldName;
      lastContext = context;
    }
    return context;
  }
  function lookUp(tenantId, collectionId, fieldName) {
    let byCollection = contexts.get(tenantId);
    let byField = byCollection === undefined ? undefined : byCollection.get(collectionId);
    const known = byField === undefined ? undefined : byField.get(fieldName);
    if (known !== undefined && known !== SEEN) return known;
    if (typeof tenantId !== 'string' || typeof collectionId !== 'string' || typeof fieldName !== 'string') return undefined;
    if (known === SEEN) {
      const context = withToken(makeContext(tenantId, collectionId, fieldName));
      byField.set(fieldName, context);
      return context;
    }
    if (++size > MAX_CONTEXTS) {
      contexts.clear();
      size = 1;
      byCollection = undefined;
      lastContext = lastTenant = lastCollection = lastField = undefined;
    }
    if (byCollection === undefined) contexts.set(tenantId, (byCollection = new SafeMap()));
    byField = byCollection.get(collectionId);
    if (byField === undefined) byCollection.set(collectionId, (byField = new SafeMap()));
    byField.set(fieldName, SEEN);
    return undefined;
  }

  // Each hot function is a method (so not a constructor) named as the native one.
  // The loop writes each once per path, and the paths differ in what a call
  // holds: on Node-API, handles; on Bun, handles paired with their tokens,
  // and, for an operation with a bun:ffi body, a try of that body first.
  // One body for all three would test, on every call, what the loop decides
  // once here.
  const define = (target, name, value, enumerable) => Object.defineProperty(target, name, { value, writable: true, enumerable, configurable: true });
  const HOT = [
    ['encrypt', natives.encrypt, natives.globalEncrypt, 0],
    ['decrypt', natives.decrypt, natives.globalDecrypt, 1],
    ['encryptBinary', natives.encryptBinary, natives.globalEncryptBinary, 2],
    ['decryptBinary', natives.decryptBinary, natives.globalDecryptBinary, 3],
  ];
  for (const [name, native, global, op] of HOT) {
    if (fast === undefined) {
      define(proto, name, {
        [name](value, tenantId, collectionId, fieldName) {
          return native(handleOf(this), value, contextOf(tenantId, collectionId, fieldName), tenantId, collectionId, fieldName);
        },
      }[name], false);
      // The process-wide functions read their context themselves.
      define(exports, name, global, true);
      continue;
    }
    const run = fast[op];
    if (run === undefined) {
      define(proto, name, {
        [name](value, tenantId, collectionId, fieldName) {
          const context = contextOf(tenantId, collectionId, fieldName);
          return native(handleOf(this).handle, value, context === undefined ? undefined : context.handle, tenantId, collectionId, fieldName);
        },
      }[name], false);
      define(exports, name, global, true);
      continue;
    }
    define(proto, name, {
      [name](value, tenantId, collectionId, fieldName) {
        const ring = handleOf(this);
        const context = contextOf(tenantId, collectionId, fieldName);
        if (context !== undefined) {
          const result = run(ring.token, context.token, value);
          if (result !== undefined) return result;
        }
        return native(ring.handle, value, context === undefined ? undefined : context.handle, tenantId, collectionId, fieldName);
      },
    }[name], false);
    define(exports, name, {
      [name](value, tenantId, collectionId, fieldName) {
        const context = contextOf(tenantId, collectionId, fieldName);
        if (context !== undefined) {
          const result = run(-1, context.token, value); // -1: the process-wide ring
          if (result !== undefined) return result;
        }
        return global(value, tenantId, collectionId, fieldName);
      },
    }[name], true);
  }
  define(exports, 'hotPath', fast === undefined ? 'node-api' : 'bun:ffi', true);

  // searchTokens runs on every write of a searchable column: the same
  // handles, on Node-API on both runtimes, and its options as one number
  // made here (src/callbacks/search.rs says what it holds and why), read
  // in the order and by the rules the native side has: the first option it
  // would refuse ends the reading, and the number names it. Options that
  // are not an object go as they are (-1), for the native side to read.
  const handleIn = fast === undefined ? (held) => held : (held) => held.handle;
  const FLAGS = ['contains', 'prefix', 'words', 'accents']; // FLAG_OPTIONS in src/api/search.rs, in its order
  function searchFlags(options) {
    if (options === undefined || options === null) return 0b0111;
    if (typeof options !== 'object') return -1;
    let flags = 0;
    for (let i = 0; i < 4; i++) {
      const flag = options[FLAGS[i]];
      if (flag !== undefined && typeof flag !== 'boolean') return -2 - i;
      // the three indexes are on unless false, accent folding off unless true
      if (i < 3 ? flag !== false : flag === true) flags |= 1 << i;
    }
    const secret = options.secret;
    if (secret === undefined) return flags;
    if (typeof secret !== 'number' || !(secret >= 0 && secret < 1024) || secret % 1 !== 0) return -6;
    return flags | (secret << 4);
  }
  // searchTokenText: the same call, the tokens as words (a string).
  function searchMethod(name, native) {
    define(proto, name, {
      [name](value, tenantId, collectionId, fieldName, options) {
        const ring = handleIn(handleOf(this));
        const flags = searchFlags(options);
        // Options are refused before the context is looked at, as before the
        // context had a handle: without one, the native side keeps that order.
        const context = flags < 0 ? undefined : contextOf(tenantId, collectionId, fieldName);
        return native(ring, value, context === undefined ? undefined : handleIn(context), tenantId, collectionId, fieldName, options, flags);
      },
    }[name], false);
  }
  searchMethod('searchTokens', natives.searchTokens);
  searchMethod('searchTokenText', natives.searchTokenText);

  // The operations through bun:ffi, indexed by ale_ffi's op: each returns
  // the result, or undefined for "take the Node-API path".
  function bunFfi(path) {
    let lib;
    try {
      const { dlopen, FFIType: T } = process.getBuiltinModule('bun:ffi');
      lib = dlopen(path, {
        ale_ffi: { args: [T.i32, T.f64, T.f64, T.ptr, T.i32, T.ptr, T.i32], returns: T.i32 },
        ale_ffi_wipe: { args: [T.ptr, T.i32], returns: T.void },
      });
    } catch {
      return undefined; // no bun:ffi here: the Node-API path
    }
    const { ale_ffi: call, ale_ffi_wipe: wipe } = lib.symbols;
    const { ptr } = process.getBuiltinModule('bun:ffi');
    // The encoder and the two scratch Buffers are this closure's own, so
    // their methods come from frozen prototypes made here: a plain method
    // call, which the JIT inlines, where an uncurried built-in (as for the
    // caller's bytes below) costs more (docs/performance.md, "Figures
    // behind code comments"). Their sizes are kept here too, not read back
    // through the typed arrays' patchable getters.
    const encoder = new (safe(TextEncoder, ['encodeInto']))();
    const setPrototypeOf = Object.setPrototypeOf;
    const allocUnsafeSlow = Buffer.allocUnsafeSlow;
    const scratchProto = Object.freeze(
      Object.create(Buffer.prototype, {
        latin1Slice: { value: Buffer.prototype.latin1Slice },
        utf8Slice: { value: Buffer.prototype.utf8Slice },
        fill: { value: Uint8Array.prototype.fill },
      }),
    );
    const scratch = (bytes) => setPrototypeOf(allocUnsafeSlow(bytes), scratchProto);
    const tagOf = uncurry(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), Symbol.toStringTag).get);
    const lengthOf = uncurry(Object.getOwnPropertyDescriptor(Object.getPrototypeOf(Uint8Array.prototype), 'length').get);
    // Longer values take the Node-API path, which reads them without a copy
    // here and makes the result without one through the scratch memory:
    // where the two paths cross differs by host (docs/performance.md, "Where
    // bun:ffi and Node-API cross"), and this follows the lowest measured.
    const MAX_UNITS = 3 << 10;
    const NODE_API = -1;
    const FAILED = -2;

    let inputSize = 4096;
    let input = scratch(inputSize);
    let inputPtr = ptr(input);
    let outputSize = 4096;
    let output = scratch(outputSize);
    let outputPtr = ptr(output);
    // Each grows into locals first and assigns size, buffer and pointer
    // together once all exist: scratch() and ptr() can throw (out of memory,
    // or stack exhaustion), and a size ahead of its buffer would tell the
    // native side it may write past it. The native side also checks that a
    // result fits the room it is given, and takes Node-API when it does not.
    const room = (bytes) => {
      if (inputSize < bytes) {
        const size = 2 ** ceil(log2(bytes));
        const buffer = scratch(size);
        const at = ptr(buffer);
        input = buffer;
        inputPtr = at;
        inputSize = size;
      }
    };
    const outRoom = (bytes) => {
      if (outputSize < bytes) {
        const size = 2 ** ceil(log2(bytes));
        const buffer = scratch(size);
        const at = ptr(buffer);
        output = buffer;
        outputPtr = at;
        outputSize = size;
      }
    };
    // The result's length and flags, or undefined for the Node-API path.
    const done = (result) => {
      if (result >= 0) {
        if (result & 2) flushWarning();
        return result;
      }
      if (result === FAILED) throwError();
      return undefined;
    };
    // The plaintext in `output` as a string; the copy there is wiped, even
    // when making the string throws, by ale_ffi_wipe, which costs less than
    // the typed array's fill (docs/performance.md, "Bun: the bun:ffi path").
    const plaintext = (result) => {
      const n = result >>> 2;
      try {
        return result & 1 ? output.latin1Slice(0, n) : output.utf8Slice(0, n);
      } finally {
        wipe(outputPtr, n);
      }
    };
    // UTF-8 of a string into `input`; its length, or -1 when it takes the
    // Node-API path (also for an encoding that stopped short, which room()
    // rules out).
    const encode = (value) => {
      if (typeof value !== 'string' || value.length > MAX_UNITS) return -1;
      room(value.length * 3);
      const { read, written } = encoder.encodeInto(value, input);
      if (read === value.length) return written;
      input.fill(0, 0, written);
      return -1;
    };
    const sealText = (ring, context, value) => {
      const n = encode(value);
      if (n < 0) return undefined;
      // Room for the base64url of n bytes and the longest envelope's other
      // parts (envelope::overhead in the core); a value whose envelope does
      // not fit takes the Node-API path unsealed.
      outRoom(4 * ceil(n / 3) + 72);
      const result = done(call(0, ring, context, inputPtr, n, outputPtr, outputSize));
      return result === undefined ? undefined : output.latin1Slice(0, result >>> 2);
    };
    const openText = (ring, context, envelope) => {
      const n = encode(envelope);
      if (n < 0) return undefined;
      outRoom(n);
      const result = done(call(1, ring, context, inputPtr, n, outputPtr, outputSize));
      return result === undefined ? undefined : plaintext(result);
    };
    const openBytes = (ring, context, bytes) => {
      if (!ArrayBuffer.isView(bytes) || tagOf(bytes) !== 'Uint8Array') return undefined;
      const n = lengthOf(bytes);
      if (n === 0 || n > MAX_UNITS) return undefined;
      outRoom(n);
      const result = done(call(3, ring, context, bytes, n, outputPtr, outputSize));
      return result === undefined ? undefined : plaintext(result);
    };
    // encryptBinary keeps the Node-API path: its Buffers come from the
    // addon's pool there, which beats making one here (docs/performance.md).
    return [sealText, openText, undefined, openBytes];
  }
});
