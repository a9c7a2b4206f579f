import { ConfigError, loadConfig, type Config } from '../config.js';
import { explainStartupError } from '../startup-errors.js';

// What every mediad command shares: the configuration (every problem listed, exit 2), and
// failures said in words (exit 1), never a stack trace.

export function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(
        `mediad: ${err.message}\nFix the variables above (see docs/configuration.md) and start again.\n`,
      );
      process.exit(2);
    }
    throw err;
  }
}

/** Runs a command's work; a start-up failure (database, data dir, port, TLS files) is explained. */
export async function explained<T>(config: Config, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const why = explainStartupError(err, config);
    process.stderr.write(`mediad: ${why ?? (err instanceof Error ? err.message : String(err))}\n`);
    process.exit(1);
  }
}
