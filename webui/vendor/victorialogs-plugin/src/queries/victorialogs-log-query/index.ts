export * from './query';
export * from './VictoriaLogsLogQuery';
export * from './VictoriaLogsLogQueryEditor';
export * from './types';
