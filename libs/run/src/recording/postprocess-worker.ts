// A post-processing worker of `probe record`: started by the recorder's process pool at nice 10.
import { serveTasks } from '@duplex-bench/launcher';
import { postprocessSession, type PostprocessTask } from './postprocess';

serveTasks((task) => postprocessSession(task as PostprocessTask));
