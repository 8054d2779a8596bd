/**
 * CloudWatch alarms of one stage, all notifying one SNS topic (stack output `AlarmTopicArn`; subscribe an e-mail
 * address or a chat integration to it). Thresholds are deliberately simple and documented here. Also the one service
 * metric no function can write: token failures, counted from the APIs' access logs (countTokenFailures).
 */
import { Duration } from 'aws-cdk-lib';
import type { HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { Alarm, ComparisonOperator, MathExpression, Metric, TreatMissingData, Unit } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { FilterPattern, type LogGroup, type MetricFilter } from 'aws-cdk-lib/aws-logs';
import type { IDomain } from 'aws-cdk-lib/aws-opensearchservice';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { POWERTOOLS_METRICS_NAMESPACE, POWERTOOLS_SERVICE_NAME } from './service-function.js';

/** The thresholds (docs/operations.md, "On AWS" lists them). */
export const ALARM_THRESHOLDS = {
  /** Percentage of 5xx answers over 5 minutes, counted once at least 10 requests arrived, in 2 of 3 periods. */
  api5xxPercent: 5,
  /** Minimum requests in 5 minutes before the 5xx percentage counts. */
  api5xxMinimumRequests: 10,
  /** Function errors (unhandled exceptions, timeouts) in 5 minutes. */
  functionErrors: 1,
  /** Throttled invocations in 5 minutes. */
  functionThrottles: 1,
  /** Messages visible in a dead-letter queue (any). */
  deadLetterMessages: 0,
  /**
   * Age of the oldest message of a work queue, seconds (5-minute maximum): 15 minutes, ROLLOUT_CHUNK_TIMEOUT, after
   * which the rollout sweeper sends a waiting chunk again; the worker is failing or cannot keep up.
   */
  workQueueAgeSeconds: 900,
  /** Age of the oldest stream record the indexer has not processed, ms (2 consecutive 5-minute maxima). */
  iteratorAgeMs: 60_000,
  /** OpenSearch: free storage of the fullest data node below this percentage of its volume (1-minute minimum). */
  searchFreeStoragePercent: 20,
  /** OpenSearch: JVM memory pressure of any data node above this percentage (5-minute maxima, 3 in a row). */
  searchJvmMemoryPressurePercent: 80,
  /** OpenSearch: minutes in a row the cluster may be yellow (a node or a replica missing) before the alarm. */
  searchYellowMinutes: 5,
  /** A scheduled function: 5-minute periods in a row without one invocation (the schedule stopped or is failing). */
  scheduledMissedPeriods: 2,
  /** A scheduled function: its longest run of 5 minutes above this percentage of its timeout (it is nearing it). */
  scheduledDurationPercent: 80,
} as const;

const FIVE_MINUTES = Duration.minutes(5);

/** Name of the token failure count: the handlers' METRIC.tokenFailures (functions/platform/observability.ts). */
export const TOKEN_FAILURES_METRIC = 'TokenFailures';

/**
 * Name of the bearer authorizer's failure count: the handlers' METRIC.authorizerFailures
 * (functions/platform/observability.ts), published with the one dimension `service`.
 */
export const AUTHORIZER_FAILURES_METRIC = 'AuthorizerFailures';

/**
 * Counts the requests answered 401 in `accessLogs` (an HTTP API's JSON access log, `status` as text) as TokenFailures
 * in the functions' metrics namespace, without dimension, so that the counts of every API given add up in one metric.
 * On AWS a refused token never reaches a function: API Gateway's JWT authorizer answers 401 itself, so the access log
 * is the only place that sees it (its `authorizerError` field says why). Give it only the access log of an API whose
 * 401s are all refused tokens: not the auth API's, whose token endpoint answers 401 to a wrong password.
 */
export function countTokenFailures(accessLogs: LogGroup): MetricFilter {
  return accessLogs.addMetricFilter('TokenFailures', {
    metricNamespace: POWERTOOLS_METRICS_NAMESPACE,
    metricName: TOKEN_FAILURES_METRIC,
    filterPattern: FilterPattern.stringValue('$.status', '=', '401'),
    metricValue: '1',
    unit: Unit.COUNT,
  });
}

/** The alarm topic and the factory methods that create one alarm each and point it at the topic. */
export class Monitoring extends Construct {
  readonly topic: Topic;
  private readonly action: SnsAction;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.topic = new Topic(this, 'AlarmTopic', { enforceSSL: true });
    this.action = new SnsAction(this.topic);
  }

  /** 5xx answers above ALARM_THRESHOLDS.api5xxPercent of the requests of `api`. */
  api5xxRate(id: string, api: HttpApi, name: string): Alarm {
    const rate = new MathExpression({
      expression: `IF(requests >= ${ALARM_THRESHOLDS.api5xxMinimumRequests}, 100 * errors / requests, 0)`,
      usingMetrics: {
        errors: api.metricServerError({ statistic: 'Sum', period: FIVE_MINUTES }),
        requests: api.metricCount({ statistic: 'Sum', period: FIVE_MINUTES }),
      },
      period: FIVE_MINUTES,
      label: `${name} 5xx %`,
    });
    return this.alarm(id, {
      metric: rate,
      threshold: ALARM_THRESHOLDS.api5xxPercent,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      description: `${name}: more than ${ALARM_THRESHOLDS.api5xxPercent}% of requests answered 5xx (5-minute periods, 2 of 3).`,
    });
  }

  /**
   * Errors and throttles of `fn`. With `failuresMetric`, the errors alarm counts that metric of the function's own
   * (dimension `service`, published at once) instead of its Lambda errors: for a function that throws on purpose, as
   * an authorizer refusing a token. Its timeouts and crashes then show as its API's 5xx answers (api5xxRate).
   */
  functionHealth(id: string, fn: IFunction, name: string, options: { failuresMetric?: string } = {}): Alarm[] {
    return [
      this.alarm(`${id}Errors`, {
        metric:
          options.failuresMetric === undefined
            ? fn.metricErrors({ statistic: 'Sum', period: FIVE_MINUTES })
            : new Metric({
                namespace: POWERTOOLS_METRICS_NAMESPACE,
                metricName: options.failuresMetric,
                dimensionsMap: { service: POWERTOOLS_SERVICE_NAME },
                statistic: 'Sum',
                period: FIVE_MINUTES,
              }),
        threshold: ALARM_THRESHOLDS.functionErrors,
        comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        description:
          options.failuresMetric === undefined
            ? `${name}: unhandled errors or timeouts (5 minutes).`
            : `${name}: ${options.failuresMetric} (5 minutes): it could not decide (an issuer's keys unreachable, or a bug).`,
      }),
      this.alarm(`${id}Throttles`, {
        metric: fn.metricThrottles({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: ALARM_THRESHOLDS.functionThrottles,
        comparison: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        description: `${name}: throttled invocations (5 minutes); check the account's Lambda concurrency.`,
      }),
    ];
  }

  /** Any message in the dead-letter queue `queue`. */
  deadLetters(id: string, queue: IQueue, name: string): Alarm {
    return this.alarm(id, {
      metric: queue.metricApproximateNumberOfMessagesVisible({ statistic: 'Maximum', period: Duration.minutes(1) }),
      threshold: ALARM_THRESHOLDS.deadLetterMessages,
      description: `${name}: messages in the dead-letter queue (events that failed every retry; see docs/operations.md for replay).`,
    });
  }

  /** The oldest message of the work queue `queue` waits longer than workQueueAgeSeconds (its consumer is failing or behind). */
  queueAge(id: string, queue: IQueue, name: string): Alarm {
    return this.alarm(id, {
      metric: queue.metricApproximateAgeOfOldestMessage({ statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: ALARM_THRESHOLDS.workQueueAgeSeconds,
      description: `${name}: a message has waited more than ${ALARM_THRESHOLDS.workQueueAgeSeconds / 60} minutes (its consumer is failing or cannot keep up).`,
    });
  }

  /** The stream consumer `fn` falls behind its streams. */
  iteratorAge(id: string, fn: IFunction, name: string): Alarm {
    return this.alarm(id, {
      metric: fn.metric('IteratorAge', { statistic: 'Maximum', period: FIVE_MINUTES }),
      threshold: ALARM_THRESHOLDS.iteratorAgeMs,
      evaluationPeriods: 2,
      description: `${name}: the oldest unprocessed stream record is older than ${ALARM_THRESHOLDS.iteratorAgeMs / 1000} s (two 5-minute periods).`,
    });
  }

  /**
   * A function a schedule runs every `everyMinutes` (errors and throttles: functionHealth): no invocation at all for
   * scheduledMissedPeriods 5-minute periods (the schedule is disabled, deleted or cannot invoke it; no data counts as
   * missing runs), and a run longer than scheduledDurationPercent of `timeout` (its work outgrows its schedule).
   */
  scheduledFunction(id: string, fn: IFunction, name: string, schedule: { everyMinutes: number; timeout: Duration }): Alarm[] {
    const durationMs = Math.floor((schedule.timeout.toMilliseconds() * ALARM_THRESHOLDS.scheduledDurationPercent) / 100);
    return [
      this.alarm(`${id}MissedRuns`, {
        metric: fn.metricInvocations({ statistic: 'Sum', period: FIVE_MINUTES }),
        threshold: 1,
        comparison: ComparisonOperator.LESS_THAN_THRESHOLD,
        evaluationPeriods: ALARM_THRESHOLDS.scheduledMissedPeriods,
        missingData: TreatMissingData.BREACHING,
        description: `${name}: not invoked for ${5 * ALARM_THRESHOLDS.scheduledMissedPeriods} minutes although scheduled every ${schedule.everyMinutes} minute(s); check its schedule.`,
      }),
      this.alarm(`${id}Duration`, {
        metric: fn.metricDuration({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: durationMs,
        description: `${name}: a run took more than ${ALARM_THRESHOLDS.scheduledDurationPercent}% of its ${schedule.timeout.toSeconds()} s timeout (${durationMs} ms).`,
      }),
    ];
  }

  /**
   * The health of the OpenSearch domain `domain` (data nodes of `volumeGiB` each), as AWS recommends for it: cluster
   * red (a primary shard unassigned: searches and writes fail) at once; yellow (a replica unassigned: one node from
   * data loss) for searchYellowMinutes; free storage under searchFreeStoragePercent of a node's volume; writes
   * blocked (disk or memory protection); JVM memory pressure above searchJvmMemoryPressurePercent for 15 minutes;
   * a failed automated snapshot.
   */
  searchDomain(id: string, domain: IDomain, volumeGiB: number): Alarm[] {
    const oneMinute = Duration.minutes(1);
    const freeMiB = Math.floor((volumeGiB * 1024 * ALARM_THRESHOLDS.searchFreeStoragePercent) / 100);
    const atLeastOnce = ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD;
    return [
      this.alarm(`${id}ClusterRed`, {
        metric: domain.metricClusterStatusRed({ statistic: 'Maximum', period: oneMinute }),
        threshold: 1,
        comparison: atLeastOnce,
        description: 'OpenSearch cluster red: a primary shard is unassigned, searches and indexing of the affected index fail.',
      }),
      this.alarm(`${id}ClusterYellow`, {
        metric: domain.metricClusterStatusYellow({ statistic: 'Maximum', period: oneMinute }),
        threshold: 1,
        comparison: atLeastOnce,
        evaluationPeriods: ALARM_THRESHOLDS.searchYellowMinutes,
        description: `OpenSearch cluster yellow for ${ALARM_THRESHOLDS.searchYellowMinutes} minutes: a replica shard is unassigned (a node is missing, or the index asks for more replicas than the nodes allow).`,
      }),
      this.alarm(`${id}FreeStorage`, {
        metric: domain.metricFreeStorageSpace({ statistic: 'Minimum', period: oneMinute }),
        threshold: freeMiB,
        comparison: ComparisonOperator.LESS_THAN_OR_EQUAL_TO_THRESHOLD,
        description: `OpenSearch: a data node has ${freeMiB} MiB (${ALARM_THRESHOLDS.searchFreeStoragePercent}% of its ${volumeGiB} GiB) or less free; writes are blocked near full. Raise opensearchVolumeGiB.`,
      }),
      this.alarm(`${id}WritesBlocked`, {
        metric: domain.metricClusterIndexWritesBlocked({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: 1,
        comparison: atLeastOnce,
        description: 'OpenSearch blocks index writes (storage or memory protection): the search indexer fails and retries until it lifts.',
      }),
      this.alarm(`${id}JvmMemoryPressure`, {
        metric: domain.metricJVMMemoryPressure({ statistic: 'Maximum', period: FIVE_MINUTES }),
        threshold: ALARM_THRESHOLDS.searchJvmMemoryPressurePercent,
        evaluationPeriods: 3,
        description: `OpenSearch JVM memory pressure above ${ALARM_THRESHOLDS.searchJvmMemoryPressurePercent}% for 15 minutes: requests may be rejected; consider a larger instance type.`,
      }),
      this.alarm(`${id}SnapshotFailure`, {
        metric: domain.metricAutomatedSnapshotFailure({ statistic: 'Maximum', period: oneMinute }),
        threshold: 1,
        comparison: atLeastOnce,
        description: 'OpenSearch automated snapshot failed (the index can also be rebuilt from DynamoDB with the reindex function).',
      }),
    ];
  }

  private alarm(
    id: string,
    options: {
      metric: MathExpression | ReturnType<IFunction['metricErrors']>;
      threshold: number;
      description: string;
      evaluationPeriods?: number;
      datapointsToAlarm?: number;
      comparison?: ComparisonOperator;
      /** @default NOT_BREACHING: no data is no problem */
      missingData?: TreatMissingData;
    },
  ): Alarm {
    const alarm = new Alarm(this, id, {
      metric: options.metric,
      threshold: options.threshold,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      ...(options.datapointsToAlarm === undefined ? {} : { datapointsToAlarm: options.datapointsToAlarm }),
      comparisonOperator: options.comparison ?? ComparisonOperator.GREATER_THAN_THRESHOLD,
      treatMissingData: options.missingData ?? TreatMissingData.NOT_BREACHING,
      alarmDescription: options.description,
    });
    alarm.addAlarmAction(this.action);
    return alarm;
  }
}
