// Stands in for `srvx/node` in the bundled command (scripts/bundle-server.mjs). @tus/server imports
// srvx's Node adapter at the top of its module for `Server.handle(req, res)`; mediad calls only
// `handleWeb(request)` (src/api/uploads-tus.ts). Loading the adapter cost 7 MB of RSS in a bare
// `node` and ~2 MB in the server, for code never run, against the 128 MB the server may hold
// during a large upload (issue 25; docs/benchmarks.md).
const unused = () => {
  throw new Error('mediad bundles @tus/server without its Node adapter: call handleWeb(), not handle()');
};

export class NodeRequest {
  constructor() {
    unused();
  }
}

export const sendNodeResponse = unused;
