// Types of the package entry point (main.cjs): the generated API, unchanged
// (index.d.ts, generated from src/api/ and src/class.rs), and which backend loaded.
export * from './index.js';

/**
 * Which backend this process uses: `'native'`, the Rust addon, or `'js'`,
 * the node:crypto fallback that runs when no native binary loads (or
 * `ALE_BACKEND=js` asks for it). Both have this API and write and read the
 * same envelopes.
 */
export declare const backend: 'native' | 'js';

/**
 * How the hot calls (`encrypt`, `decrypt`, `decryptBinary` and the ring
 * methods of the same names) cross into the addon: `'bun:ffi'` on Bun
 * (not on Windows) unless `ALE_BUN_PATH=napi`, otherwise `'node-api'`; `'node:crypto'` when
 * `backend` is `'js'`.
 */
export declare const hotPath: 'node-api' | 'bun:ffi' | 'node:crypto';

/** The generated loader's marker of the artifact it loaded; `undefined` when `backend` is `'js'`. */
export declare const __napiBindingTarget: 'native' | 'wasm32-wasi' | 'wasm32-wasip1' | undefined;
