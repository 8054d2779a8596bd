/**
 * The alarms of the stateless stack, all to one topic (lib/monitoring.ts): 5xx rate per API, errors and throttles per
 * function, each dead-letter queue, the stream consumers' lag, the work queue's oldest message, scheduled functions
 * that stop running or outgrow their schedule, and the OpenSearch domain's health.
 */
import { Duration, type Stack } from 'aws-cdk-lib';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IDomain } from 'aws-cdk-lib/aws-opensearchservice';
import { AUTHORIZER_FAILURES_METRIC, Monitoring } from '../monitoring.js';
import { HTTP_FUNCTION_TIMEOUT, type ServiceFunction } from '../service-function.js';
import type { EventFunction, WorkQueue } from './event-functions.js';
import type { ApiStage } from './http-apis.js';

/** What is alarmed. */
export interface AlarmsProps {
  /** Every API with its name in alarms. */
  apis: readonly [ApiStage, string][];
  /** Every function of the stack, by handler module (alarmed under its module's name). */
  functions: ReadonlyMap<string, ServiceFunction>;
  /** Functions of the other stack alarmed here too, with their names. */
  otherFunctions: readonly [IFunction, string][];
  eventFunctions: readonly EventFunction[];
  workQueue: WorkQueue;
  searchDomain: IDomain;
  /** The volume of each data node, GiB (the free storage threshold is a share of it). */
  searchVolumeGiB: number;
}

/** Creates the stack's Monitoring construct (`Monitoring`) and every alarm of the module comment. */
export function createAlarms(stack: Stack, props: AlarmsProps): Monitoring {
  const monitoring = new Monitoring(stack, 'Monitoring');
  for (const [{ api }, name] of props.apis) monitoring.api5xxRate(`${api.node.id}5xxRate`, api, name);
  // An authorizer refuses a token by throwing (API Gateway's only way to answer 401): it counts its real failures.
  const authorizers = new Set(
    props.eventFunctions.filter(({ definition }) => definition.trigger.kind === 'httpAuthorizer').map(({ fn }) => fn),
  );
  for (const [entry, fn] of props.functions)
    monitoring.functionHealth(fn.node.id, fn, entry, authorizers.has(fn) ? { failuresMetric: AUTHORIZER_FAILURES_METRIC } : {});
  for (const [fn, name] of props.otherFunctions) monitoring.functionHealth(fn.node.id, fn, name);
  for (const eventFunction of props.eventFunctions) alarmEventFunction(monitoring, eventFunction);
  const { queue, deadLetterQueue, consumer } = props.workQueue;
  monitoring.deadLetters(`${consumer.trigger.queue}DeadLetters`, deadLetterQueue, consumer.label);
  monitoring.queueAge(`${consumer.trigger.queue}QueueAge`, queue, consumer.trigger.queueLabel);
  monitoring.searchDomain('SearchDomain', props.searchDomain, props.searchVolumeGiB);
  return monitoring;
}

/** The alarms of one event function's trigger: its dead letters, its streams' lag, its schedule. */
function alarmEventFunction(monitoring: Monitoring, { definition, fn, deadLetterQueue, queue }: EventFunction): void {
  const { id, label, trigger } = definition;
  if (deadLetterQueue !== undefined) monitoring.deadLetters(`${id}DeadLetters`, deadLetterQueue, label);
  if (queue !== undefined && trigger.kind === 'busEvents') monitoring.queueAge(`${trigger.queue}QueueAge`, queue, trigger.queueLabel);
  if (trigger.kind === 'tableStream') monitoring.iteratorAge(`${id}IteratorAge`, fn, label);
  if (trigger.kind === 'schedule' && trigger.via === 'scheduler') {
    monitoring.scheduledFunction(id, fn, label, {
      everyMinutes: trigger.everyMinutes,
      timeout: definition.access.timeoutSeconds === undefined ? HTTP_FUNCTION_TIMEOUT : Duration.seconds(definition.access.timeoutSeconds),
    });
  }
}
