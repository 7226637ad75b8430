// The process's logger: one JSON object per line (production, tests, log collectors), or
// pino-pretty's one readable line per record (LOG_FORMAT=pretty, the default in development).
import pino, { type Logger } from 'pino';

export interface LoggerOptions {
  level: string;
  format: 'pretty' | 'json';
}

/** `destination` is a file descriptor: 1 (stdout) for the server, 2 (stderr) for the CLI. */
export async function createLogger(opts: LoggerOptions, destination: 1 | 2 = 1): Promise<Logger> {
  if (opts.format === 'pretty') {
    try {
      // A development dependency: an install without them (npm ci --omit=dev) logs JSON instead.
      const { default: pretty } = await import('pino-pretty');
      return pino(
        { level: opts.level },
        pretty({ destination, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }),
      );
    } catch {
      const log = pino({ level: opts.level }, pino.destination(destination));
      log.warn('LOG_FORMAT=pretty needs pino-pretty (a development dependency): logging JSON');
      return log;
    }
  }
  return pino({ level: opts.level }, pino.destination(destination));
}
