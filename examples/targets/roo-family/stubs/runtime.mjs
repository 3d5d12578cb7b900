// The stand-in for every module of the agent that the adapter does not need (webviews, MCP, the
// terminal, cloud, the SDKs): a value that can be read, called, constructed and extended without
// doing anything, so that importing the agent's Task.ts costs nothing and calls nothing. It is not
// thenable (awaiting it gives it back) and it prints as "[stub NAME]", so a stub that ends up in a
// result is easy to spot.
const cache = new Map();

export function stub(name) {
  if (cache.has(name)) return cache.get(name);
  const target = function () {};
  const children = new Map();
  const proxy = new Proxy(target, {
    get(t, key) {
      if (key === "then") return undefined;
      if (key === "prototype") return t.prototype;
      if (key === Symbol.toPrimitive) return () => `[stub ${name}]`;
      if (key === "toString" || key === "toJSON") return () => `[stub ${name}]`;
      if (key === Symbol.iterator) return function* () {};
      if (typeof key === "symbol") return t[key];
      if (!children.has(key)) children.set(key, stub(`${name}.${key}`));
      return children.get(key);
    },
    apply() {
      return stub(`${name}()`);
    },
    construct() {
      return stub(`new ${name}`);
    },
  });
  cache.set(name, proxy);
  return proxy;
}
