// The command line's process (`npm run cli -- …`): runs one command line (cli/main.ts describes
// the commands) and exits with its code.
import { runCli } from './cli/main.js';

runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
