// KeyRing.prototype's hot methods: encrypt, decrypt, encryptBinary and
// decryptBinary. src/callbacks/install.rs evaluates this file once per module load and
// calls the function it evaluates to with the prototype and six native
// functions, which nothing else receives. See src/callbacks/direct.rs for why.
//
// Each method passes the native function:
// - the ring's handle, made once per ring by makeHandle (which checks that
//   `this` is a KeyRing, as every method does) and kept in a WeakMap;
// - the context's handle, made by makeContext (which refuses what a call
//   would refuse, with the same code) the second time a tenant, collection
//   and field are seen, so that a context used once (a per-row field name)
//   costs no handle; undefined otherwise, with the three arguments, which
//   the native function then reads itself.
// The maps' methods are captured here, so that code which later patches
// Map or WeakMap cannot change which handle a call gets.
(function (proto, makeHandle, makeContext, encrypt, decrypt, encryptBinary, decryptBinary) {
  'use strict';
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

  const handles = new SafeWeakMap();
  function handleOf(ring) {
    let handle = handles.get(ring);
    if (handle === undefined) {
      handle = makeHandle(ring);
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
      const context = makeContext(tenantId, collectionId, fieldName);
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

  // A method named `name` calling `native`; a method, so not a constructor.
  function method(name, native) {
    return {
      [name](value, tenantId, collectionId, fieldName) {
        const ring = handleOf(this);
        return native(ring, value, contextOf(tenantId, collectionId, fieldName), tenantId, collectionId, fieldName);
      },
    }[name];
  }
  const methods = [
    method('encrypt', encrypt),
    method('decrypt', decrypt),
    method('encryptBinary', encryptBinary),
    method('decryptBinary', decryptBinary),
  ];
  for (const value of methods) {
    Object.defineProperty(proto, value.name, { value, writable: true, enumerable: false, configurable: true });
  }
})
