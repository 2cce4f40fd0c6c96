export { monotonicClock, nodeTimerHost, schedulerTimerHost, timersOn } from './clock';
export type { Clock, TimerHost } from './clock';
export { DeadlineScheduler } from './deadline-scheduler';
export type { DeadlineCallback, DeadlineSchedulerOptions, DeadlineSchedulerStats } from './deadline-scheduler';
export { ticks } from './ticks';
export type { Tick, TicksOptions } from './ticks';
export { deviationMs, isLate, spreadStarts } from './deviation';
export { scheduleStall } from './stall';
export { after, every } from './waits';
