// JSON request bodies: Fastify's own parser (prototype poisoning refused, as by default), after a
// check of how deeply the text nests (json-depth.rules.ts): deeper than MAX_JSON_DEPTH is a 400,
// never the 500 of a stack overflow in what walks the parsed body.
import type { FastifyInstance } from 'fastify';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.rules.js';
import { validationFailed } from './problem.js';

export function registerJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
      done(
        validationFailed(
          [{ path: 'body', message: `JSON nested deeper than ${MAX_JSON_DEPTH} levels` }],
          'The request body nests too deeply',
        ),
        undefined,
      );
      return;
    }
    void parse(req, text, done);
  });
}
