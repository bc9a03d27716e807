// Preloaded into Portkey's gateway by benchmarks/gateway.py's documented
// command (node -r ./benchmarks/portkey_fetch.cjs …): fetch() answers with
// headers that can be changed. Portkey 1.15.2 appends its own headers to
// the upstream's response, which Node's fetch makes immutable: every
// request then fails with "TypeError: immutable" (Portkey issue 1389).
const fetched = globalThis.fetch;
globalThis.fetch = async (...args) => {
  const answer = await fetched(...args);
  return new Response(answer.body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: answer.headers,
  });
};
