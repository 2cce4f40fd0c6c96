import { mainOf, VERSION } from '@duplex-bench/cli';
import { SERVE_COMMAND } from './commands';

/** `mock serve …`: the mock server on its own. */
mainOf({ name: 'mock', version: VERSION, summary: 'duplex-bench mock servers', commands: [SERVE_COMMAND] });
