// The KeyRing the package exports: napi-rs's class behind a constructor
// function of its own. src/callbacks/install.rs evaluates this file once per
// module load and calls the function it evaluates to with the exports.
//
// napi-rs's class does not check new.target: called without `new`, it wraps
// whatever `this` is (the exports object, or globalThis), whose methods seal
// under the process-wide key. This function refuses that call, as a class
// does (JavaScript's own TypeError), and builds every ring with
// Reflect.construct, so
// `new`, subclasses and instanceof behave as with the class itself, whose
// prototype it shares. Its static factories are its own and always build a
// KeyRing, whatever `this` is (a destructured `fromEnv` works), as the
// node:crypto backend's do.
(function (exports) {
  'use strict';
  const Native = exports.KeyRing;
  const { construct, apply, defineProperty } = Reflect;
  const nativeFromEnv = Native.fromEnv;
  const nativeForTenants = Native.forTenants;
  const KeyRing = function KeyRing(secrets, options) {
    if (new.target === undefined) throw new TypeError("Class constructor KeyRing cannot be invoked without 'new'");
    return construct(Native, [secrets, options], new.target);
  };
  // The attributes a class gives: a fixed prototype, and static methods a test may stub (mock.method, sinon).
  defineProperty(KeyRing, 'prototype', { value: Native.prototype, writable: false, enumerable: false, configurable: false });
  const method = (value) => ({ value, writable: true, enumerable: false, configurable: true });
  defineProperty(KeyRing, 'fromEnv', method(function fromEnv(env, options) {
    return apply(nativeFromEnv, KeyRing, [env, options]);
  }));
  defineProperty(KeyRing, 'forTenants', method(function forTenants(options) {
    return apply(nativeForTenants, KeyRing, [options]);
  }));
  defineProperty(Native.prototype, 'constructor', { value: KeyRing, writable: true, enumerable: false, configurable: true });
  exports.KeyRing = KeyRing;
});
