/** The mock's command, for the one executable that carries every command (`duplex-bench serve`). */
export { SERVE_COMMAND } from './commands';
