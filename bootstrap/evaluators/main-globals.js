// Node's globals, copied from the main realm into a program's own vm context.
//
// Node defines many globals lazily (FormData loads undici, CompressionStream zlib, Crypto the
// crypto and TLS modules, ...): merely reading such a property's descriptor loads its module.
// Copying every descriptor up front therefore loaded about 40 modules into each context's process,
// about 5 MiB of every retained environment (tests/bench/owner-density.mjs). Instead each name
// starts as an accessor that copies the main global's property on first use; from then on the
// context holds exactly what the main global has (a data property stays a data property). Node's
// own accessors (process, Buffer, ...) insist on the main global as `this`, so those keep
// forwarding reads there; an assignment shadows the name, as on Node's own global.

export function copyMainGlobal(context, key) {
  if (!Object.hasOwn(globalThis, key)) return;
  const shadow = (value) => {
    Object.defineProperty(context, key, { value, writable: true, enumerable: true, configurable: true });
  };
  Object.defineProperty(context, key, {
    configurable: true,
    // Reads the attribute only: the property is not materialized.
    enumerable: Object.prototype.propertyIsEnumerable.call(globalThis, key),
    get() {
      const descriptor = Object.getOwnPropertyDescriptor(globalThis, key);
      if (descriptor === undefined) return undefined;
      if ('value' in descriptor) {
        Object.defineProperty(context, key, descriptor);
        return descriptor.value;
      }
      Object.defineProperty(context, key, {
        configurable: true,
        enumerable: descriptor.enumerable,
        get: () => globalThis[key],
        set: shadow,
      });
      return globalThis[key];
    },
    set: shadow,
  });
}
