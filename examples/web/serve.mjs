// Serves the repository root for the example page, with the test suite's static server
// (e2e/server.mjs: module scripts as text/javascript, .wasm as application/wasm, no caching).
//
//   node examples/web/serve.mjs [port]      (default 8080), then open the address it prints
import { startServer } from '../../e2e/server.mjs';

const port = Number(process.argv[2] ?? 8080);
const server = await startServer({ port });
console.log(`skv example: ${server.origin}/examples/web/index.html (Ctrl-C stops)`);
