// The process-wide ring as the columns use it: set by initKeyRing(), or, on
// a column's first use without one, from the environment exactly as
// initKeyRing() with no argument reads it (ENCRYPTION_KEY, then
// SECRET_ENCRYPTION_KEY, and ENCRYPTION_KEY_PREVIOUS). Importing a schema
// therefore reads no key: `vite build` imports every server module with no
// secrets set. A missing or bad key fails the statement with
// ALE_INVALID_KEY before anything is written, and is tried again on the
// next use, so a key set later is picked up.
import * as native from '../../index.js';
import type { CodedError } from '../shared/errors.js';

type Call<V, R> = (value: V, tenantId: string, collectionId: string, fieldName: string) => R;

/**
 * `call`, and when the process-wide ring is not set yet, initKeyRing() from
 * the environment and `call` again. Costs nothing once the ring is set: the
 * first attempt is the call itself.
 */
function initOnFirstUse<V, R>(call: Call<V, R>): Call<V, R> {
  return (value, tenantId, collectionId, fieldName) => {
    try {
      return call(value, tenantId, collectionId, fieldName);
    } catch (e) {
      if ((e as CodedError).code !== 'ALE_NOT_INITIALIZED') throw e;
    }
    native.initKeyRing();
    return call(value, tenantId, collectionId, fieldName);
  };
}

/** `call()` as initOnFirstUse makes a column's call, for calls off the hot path that take other arguments (search). */
export function onProcessRing<R>(call: () => R): R {
  try {
    return call();
  } catch (e) {
    if ((e as CodedError).code !== 'ALE_NOT_INITIALIZED') throw e;
  }
  native.initKeyRing();
  return call();
}

/** The process-wide ring, with the KeyRing methods the columns call. */
export const processRing = {
  encrypt: initOnFirstUse(native.encrypt),
  decrypt: initOnFirstUse(native.decrypt),
  encryptBinary: initOnFirstUse(native.encryptBinary),
  decryptBinary: initOnFirstUse(native.decryptBinary),
  blindIndex: initOnFirstUse(native.blindIndex),
  blindIndexes: initOnFirstUse(native.blindIndexes),
};

/** What the columns and batch operations encrypt with: a KeyRing, or the process-wide ring. */
export type Sealer = Pick<native.KeyRing, 'encrypt' | 'decrypt' | 'encryptBinary' | 'decryptBinary' | 'blindIndex' | 'blindIndexes'>;
