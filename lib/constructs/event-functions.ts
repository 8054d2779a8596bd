/**
 * The functions no route runs (functions/contract/functions.ts), each wired to its trigger: table streams (batches
 * retried halved, failures to a dead-letter queue), the work queue (bounded concurrency, partial batch responses,
 * redrive after `maxReceiveCount` receives), schedules (EventBridge Scheduler or a rule), S3 ObjectCreated
 * notifications of the archive bucket (asynchronous, retried, then a dead-letter queue) and the custom resource
 * installing the search index. Resources are children of the stack itself, so that their logical ids stay those of
 * the stack before it was split into these parts.
 */
import { type CfnElement, CustomResource, Duration, type Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IEventBus, Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction, SqsQueue } from 'aws-cdk-lib/aws-events-targets';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { FilterCriteria, FilterRule, StartingPosition } from 'aws-cdk-lib/aws-lambda';
import { SqsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import { DynamoEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { EventType, type IBucket } from 'aws-cdk-lib/aws-s3';
import { LambdaDestination } from 'aws-cdk-lib/aws-s3-notifications';
import { Schedule as ScheduledInvocation, ScheduleExpression } from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import type { Construct } from 'constructs';
import { EVENT_SOURCE } from '../../functions/adapters/aws/eventbridge-event-publisher.js';
import { templateVersion } from '../../functions/adapters/aws/opensearch-indexes.js';
import { replicasFor } from '../../functions/adapters/aws/opensearch-queries.js';
import { TABLES, type TableKeySchema } from '../../functions/adapters/aws/tables.js';
import type {
  BusEventsTrigger,
  CustomResourceTrigger,
  FunctionDefinition,
  ObjectCreatedTrigger,
  QueueTrigger,
  ScheduleTrigger,
  TableStreamTrigger,
} from '../../functions/contract/function.js';
import { TABLE_NAMES, type TableName } from '../../functions/contract/tables.js';
import { ignoreCfnLint } from '../cfn-lint.js';
import { acknowledge, managedPolicyFinding, wildcardResourceFinding } from '../nag.js';
import { SEARCH_INDEX_ALIAS } from '../search-domain.js';
import { HTTP_FUNCTION_TIMEOUT, type ServiceFunction } from '../service-function.js';
import type { ServiceSettings } from '../settings.js';
import type { ServiceFunctions } from './function-access.js';

/**
 * Visibility timeout of a work queue: 6 times its consumer's timeout, as AWS recommends for a queue feeding a Lambda
 * function, so that a message is not delivered again while an invocation (or its retries by the event source after a
 * throttle) may still be working on it.
 */
export function visibilityTimeoutOf(consumer: FunctionDefinition<QueueTrigger | BusEventsTrigger>): Duration {
  const timeout = consumer.access.timeoutSeconds ?? HTTP_FUNCTION_TIMEOUT.toSeconds();
  return Duration.seconds(6 * timeout);
}

/**
 * An encrypted, TLS-only queue keeping failed events 14 days, the dead-letter queue of a Lambda event source or
 * asynchronous invocation, or (`of: 'queue'`) the one another queue's redrive policy names, which cdk-nag recognizes.
 */
export function deadLetterQueue(scope: Construct, id: string, of: 'lambda' | 'queue' = 'lambda'): Queue {
  const queue = new Queue(scope, id, { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
  ignoreCfnLint(
    queue,
    'AWS::SQS::Queue',
    ['ES6000'],
    'A dead-letter queue has no redrive policy of its own; the rule recognizes a dead-letter queue only by a Ref in another ' +
      "queue's redrive policy, not the Fn::GetAtt aws-cdk-lib writes there nor a Lambda event source's or invocation's destination.",
  );
  if (of === 'queue') return queue;
  acknowledge(
    queue,
    'AwsSolutions-SQS3',
    'This queue is itself a dead-letter destination (of a Lambda event source mapping or asynchronous invocation), so it has ' +
      'no dead-letter queue of its own; its depth is alarmed.',
  );
  return queue;
}

/** A work queue and its dead-letter queue (`<queue>Queue`, `<queue>DeadLetterQueue`). */
export interface WorkQueue {
  queue: Queue;
  deadLetterQueue: Queue;
  consumer: FunctionDefinition<QueueTrigger>;
}

/**
 * The one work queue the definitions name, created before the functions (every function allowed to send to it gets
 * its URL): encrypted, TLS-only, its visibility timeout from its consumer's timeout, redriven after the consumer's
 * `maxReceiveCount`.
 * @throws Error unless exactly one function consumes a queue.
 */
export function createWorkQueue(stack: Stack, functions: readonly FunctionDefinition[]): WorkQueue {
  const consumers = functions.filter((definition): definition is FunctionDefinition<QueueTrigger> => definition.trigger.kind === 'queue');
  if (consumers.length !== 1) throw new Error(`Exactly one function must consume the work queue; got ${consumers.length}.`);
  const consumer = consumers[0] as FunctionDefinition<QueueTrigger>;
  const { queue: id, maxReceiveCount, retentionDays } = consumer.trigger;
  const deadLetter = deadLetterQueue(stack, `${id}DeadLetterQueue`, 'queue');
  const queue = new Queue(stack, `${id}Queue`, {
    encryption: QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    visibilityTimeout: visibilityTimeoutOf(consumer),
    retentionPeriod: Duration.days(retentionDays),
    deadLetterQueue: { queue: deadLetter, maxReceiveCount },
  });
  return { queue, deadLetterQueue: deadLetter, consumer };
}

/** What the event functions are wired to. */
export interface EventFunctionsProps {
  settings: ServiceSettings;
  functions: readonly FunctionDefinition[];
  tables: Readonly<Record<TableName, ITable>>;
  /** The archive bucket, imported into this stack (its notification's custom resource lives here). */
  archiveBucket: IBucket;
  workQueue: WorkQueue;
  /** The service's event bus: busEvents functions get a rule on it. */
  eventBus: IEventBus;
  factory: ServiceFunctions;
}

/** One event function, the dead-letter queue of its trigger if it has one, and the queue feeding it if one does. */
export interface EventFunction {
  definition: FunctionDefinition;
  fn: ServiceFunction;
  deadLetterQueue?: Queue;
  queue?: Queue;
}

/** The functions of FUNCTIONS this stack runs, wired to their triggers (see the module comment). */
export class EventFunctions {
  readonly all: EventFunction[] = [];
  /** The custom resource's provider and its onEvent function, whose findings are acknowledged once wired. */
  private setupProvider?: { provider: Provider; onEvent: ServiceFunction };

  constructor(
    private readonly stack: Stack,
    private readonly props: EventFunctionsProps,
  ) {
    for (const definition of props.functions) {
      // The Cognito trigger lives with its user pool in the stateful stack.
      if (definition.trigger.kind === 'cognito') continue;
      const fn = props.factory.function({
        entry: definition.entry,
        access: definition.access,
        rolloutConsumer: definition.trigger.kind === 'queue',
      });
      this.all.push({ definition, fn, ...this.wire(definition, fn) });
    }
    this.acknowledgeNotifications();
    if (this.setupProvider !== undefined) this.acknowledgeProvider(this.setupProvider.provider, this.setupProvider.onEvent);
  }

  /** The finding on the function aws-cdk-lib adds for S3 notifications, when there is one. */
  private acknowledgeNotifications(): void {
    const notifications = this.stack.node.tryFindChild('BucketNotificationsHandler050a0587b7544547bf325f094a3db834');
    if (notifications === undefined) return;
    acknowledge(
      notifications,
      managedPolicyFinding('service-role/AWSLambdaBasicExecutionRole'),
      "aws-cdk-lib's S3 notification handler (configures the uploads/ ObjectCreated notification at deploy time) comes with the " +
        'basic execution managed policy; it runs only during deployments.',
    );
    ignoreCfnLint(
      notifications,
      'AWS::Lambda::Function',
      ['ES1005', 'WS1000'],
      "aws-cdk-lib's S3 notification handler runs only during deployments, with the memory aws-cdk-lib gives it (the Lambda " +
        'default) and without X-Ray tracing, which would need a wider role for a function that serves no request.',
    );
  }

  /** Connects `fn` to the trigger of `definition`; returns its dead-letter queue, if any. */
  private wire(definition: FunctionDefinition, fn: ServiceFunction): { deadLetterQueue?: Queue; queue?: Queue } {
    const { trigger } = definition;
    switch (trigger.kind) {
      case 'tableStream':
        return { deadLetterQueue: this.streams(definition.id, trigger, fn) };
      case 'objectCreated':
        return { deadLetterQueue: this.objectCreated(definition.id, trigger, fn) };
      case 'queue':
        this.queue(trigger, fn);
        return {};
      case 'busEvents':
        return this.busEvents(definition as FunctionDefinition<BusEventsTrigger>, fn);
      case 'schedule':
        this.schedule(definition, trigger, fn);
        return {};
      case 'customResource':
        this.customResource(definition.id, trigger, fn);
        return {};
      default:
        return {};
    }
  }

  /**
   * The streams of `trigger.tables` (each must have one in TABLES), from their oldest record, failures to
   * `<id>DeadLetterQueue`.
   * @throws Error for a table without a stream.
   */
  private streams(id: string, trigger: TableStreamTrigger, fn: ServiceFunction): Queue {
    const deadLetter = deadLetterQueue(this.stack, `${id}DeadLetterQueue`);
    for (const name of trigger.tables) {
      const schema: TableKeySchema = TABLES[name];
      if (schema.stream === undefined) throw new Error(`The ${name} table has no stream for ${id} (TABLES).`);
    }
    // In the order of TABLE_NAMES, whatever the order the trigger names them in.
    for (const name of TABLE_NAMES.filter((candidate) => trigger.tables.includes(candidate))) {
      fn.addEventSource(
        new DynamoEventSource(this.props.tables[name], {
          startingPosition: StartingPosition.TRIM_HORIZON,
          batchSize: trigger.batchSize,
          ...(trigger.maxBatchingWindowSeconds === undefined
            ? {}
            : { maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds) }),
          bisectBatchOnError: true,
          retryAttempts: trigger.retryAttempts,
          ...(trigger.maxRecordAgeHours === undefined ? {} : { maxRecordAge: Duration.hours(trigger.maxRecordAgeHours) }),
          reportBatchItemFailures: true,
          onFailure: new SqsDlq(deadLetter),
          ...(trigger.partitionKeyPrefix === undefined
            ? {}
            : { filters: [partitionKeyFilter(TABLES[name].partitionKey, trigger.partitionKeyPrefix)] }),
        }),
      );
    }
    return deadLetter;
  }

  /**
   * S3 ObjectCreated under the prefix invokes `fn` asynchronously (retried, then `<id>DeadLetterQueue`). The
   * notification is configured through an imported reference to the bucket, so its custom resource lives in this
   * stack: configured from the bucket's own stack, it would reference this stack's function while this stack already
   * references the bucket (a cross-stack cycle).
   */
  private objectCreated(id: string, trigger: ObjectCreatedTrigger, fn: ServiceFunction): Queue {
    const deadLetter = deadLetterQueue(this.stack, `${id}DeadLetterQueue`);
    fn.configureAsyncInvoke({
      retryAttempts: trigger.retryAttempts,
      maxEventAge: Duration.hours(trigger.maxEventAgeHours),
      onFailure: new SqsDestination(deadLetter),
    });
    this.props.archiveBucket.addEventNotification(EventType.OBJECT_CREATED, new LambdaDestination(fn), { prefix: trigger.prefix });
    ignoreCfnLint(
      this.props.archiveBucket,
      'AWS::Lambda::Permission',
      ['ES1007'],
      'The function has an EventInvokeConfig with an on-failure destination (the dead-letter queue above); the rule matches ' +
        'it to the permission only when both name the function alike, and aws-cdk-lib names it by ARN in one and by Ref in the other.',
    );
    return deadLetter;
  }

  /**
   * The work queue feeds `fn` `batchSize` messages per invocation, at most `maxConcurrency` invocations at once. A
   * message that throws is reported alone (partial batch response), received again after the visibility timeout, and
   * after `maxReceiveCount` receives moved to the dead-letter queue (alarmed).
   */
  private queue(trigger: QueueTrigger, fn: ServiceFunction): void {
    fn.addEventSource(
      new SqsEventSource(this.props.workQueue.queue, {
        batchSize: trigger.batchSize,
        maxConcurrency: trigger.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    ignoreCfnLint(
      fn,
      'AWS::Lambda::EventSourceMapping',
      ['ES1001'],
      'An SQS event source mapping takes no on-failure destination (Lambda supports one for streams and Kafka only): failed ' +
        "messages reach the work queue's dead-letter queue through its redrive policy, after maxReceiveCount receives.",
    );
  }

  /**
   * An EventBridge rule on the service's bus (source EVENT_SOURCE, the trigger's detail types) sends each event to the
   * queue `<queue>Queue`, which feeds `fn` (partial batch responses, at most `maxConcurrency` invocations). A message
   * received `maxReceiveCount` times moves to `<queue>DeadLetterQueue` (alarmed), which also takes the events the rule
   * could not send to the queue.
   */
  private busEvents(definition: FunctionDefinition<BusEventsTrigger>, fn: ServiceFunction): { deadLetterQueue: Queue; queue: Queue } {
    const { trigger } = definition;
    const deadLetter = deadLetterQueue(this.stack, `${trigger.queue}DeadLetterQueue`, 'queue');
    const queue = new Queue(this.stack, `${trigger.queue}Queue`, {
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: visibilityTimeoutOf(definition),
      retentionPeriod: Duration.days(trigger.retentionDays),
      deadLetterQueue: { queue: deadLetter, maxReceiveCount: trigger.maxReceiveCount },
    });
    new Rule(this.stack, `${definition.id}Rule`, {
      eventBus: this.props.eventBus,
      description: `${definition.label}: the bus events it consumes, to its queue.`,
      eventPattern: { source: [EVENT_SOURCE], detailType: [...trigger.detailTypes] },
      targets: [new SqsQueue(queue, { deadLetterQueue: deadLetter, retryAttempts: 185, maxEventAge: Duration.hours(24) })],
    });
    fn.addEventSource(
      new SqsEventSource(queue, {
        batchSize: trigger.batchSize,
        maxConcurrency: trigger.maxConcurrency,
        reportBatchItemFailures: true,
        ...(trigger.maxBatchingWindowSeconds === undefined
          ? {}
          : { maxBatchingWindow: Duration.seconds(trigger.maxBatchingWindowSeconds) }),
      }),
    );
    ignoreCfnLint(
      fn,
      'AWS::Lambda::EventSourceMapping',
      ['ES1001'],
      'An SQS event source mapping takes no on-failure destination (Lambda supports one for streams and Kafka only): failed ' +
        "messages reach the queue's dead-letter queue through its redrive policy, after maxReceiveCount receives.",
    );
    return { deadLetterQueue: deadLetter, queue };
  }

  /** A rule or an EventBridge Scheduler schedule runs `fn` every `everyMinutes`; a missed run is made up by the next. */
  private schedule(definition: FunctionDefinition, trigger: ScheduleTrigger, fn: ServiceFunction): void {
    if (trigger.via === 'scheduler') {
      scheduleEvery(this.stack, definition.id, fn, { entry: definition.entry, ...trigger });
      return;
    }
    const rule = new Rule(this.stack, `${definition.id}Schedule`, {
      description: trigger.description,
      schedule: Schedule.rate(Duration.minutes(trigger.everyMinutes)),
      targets: [new LambdaFunction(fn, { retryAttempts: 0 })],
    });
    // A scheduled event carries nothing but its time: a dead-letter queue (ES4000) or an on-failure destination
    // (ES1007) would only collect empty events, while the next run redoes what a failed one left.
    const reason =
      'A scheduled run needs no dead-letter queue or failure destination: the next run makes up a failed one, and its errors are alarmed.';
    ignoreCfnLint(rule, 'AWS::Events::Rule', ['ES4000'], reason);
    ignoreCfnLint(rule, 'AWS::Lambda::Permission', ['ES1007'], reason);
  }

  /**
   * The index template and alias: installed by the first deployment, the template put again by any deployment that
   * changes it (TemplateVersion, a hash of indexTemplate()). The domain's access policy is applied by the stateful
   * stack, which deploys first.
   */
  private customResource(id: string, trigger: CustomResourceTrigger, fn: ServiceFunction): void {
    const provider = new Provider(this.stack, `${id}Provider`, {
      onEventHandler: fn,
      logGroup: new LogGroup(this.stack, `${id}ProviderLogs`, { retention: this.props.settings.logRetention }),
    });
    const replicas = replicasFor(this.props.settings.opensearch.instanceCount);
    new CustomResource(this.stack, id, {
      serviceToken: provider.serviceToken,
      resourceType: trigger.resourceType,
      properties: { Alias: SEARCH_INDEX_ALIAS, TemplateVersion: templateVersion(replicas) },
    });
    this.setupProvider = { provider, onEvent: fn };
  }

  /** Findings on the function aws-cdk-lib adds for the custom-resource provider. */
  private acknowledgeProvider(provider: Provider, onEvent: ServiceFunction): void {
    acknowledge(
      provider,
      managedPolicyFinding('service-role/AWSLambdaBasicExecutionRole'),
      "The custom-resource provider framework function of aws-cdk-lib (relays the index setup's CloudFormation events) comes with " +
        'the basic execution managed policy; it runs only during deployments.',
    );
    const onEventId = this.stack.getLogicalId(onEvent.node.defaultChild as CfnElement);
    acknowledge(
      provider,
      wildcardResourceFinding(`<${onEventId}.Arn>:*`),
      'The provider framework invokes the index setup function and any of its versions (lambda:InvokeFunction on <arn>:*), as ' +
        'aws-cdk-lib grants it; nothing else.',
    );
    ignoreCfnLint(
      provider,
      'AWS::Lambda::Function',
      ['ES1005', 'WS1000'],
      'The provider framework function of aws-cdk-lib only relays CloudFormation events during deployments, with the memory ' +
        'aws-cdk-lib gives it (the Lambda default) and without X-Ray tracing; the index setup function it invokes is traced.',
    );
  }
}

/**
 * Runs `fn` every `everyMinutes` from an EventBridge Scheduler schedule (asynchronous invocations; a run that fails is
 * not retried, the next one does what it left). Scheduler rather than an EventBridge rule: the schedule's role may
 * invoke this function only, and a schedule has its own failure metrics. Constructs `{id}ScheduleRole`, `{id}Schedule`.
 */
function scheduleEvery(
  stack: Stack,
  id: string,
  fn: ServiceFunction,
  schedule: { entry: string; everyMinutes: number; description: string },
): void {
  const role = new Role(stack, `${id}ScheduleRole`, {
    assumedBy: new ServicePrincipal('scheduler.amazonaws.com').withConditions({
      StringEquals: { 'aws:SourceAccount': stack.account },
    }),
    description: `EventBridge Scheduler invoking ${schedule.entry}`,
  });
  new ScheduledInvocation(stack, `${id}Schedule`, {
    description: schedule.description,
    schedule: ScheduleExpression.rate(Duration.minutes(schedule.everyMinutes)),
    target: new LambdaInvoke(fn, { role, retryAttempts: 0, maxEventAge: Duration.minutes(1) }),
  });
  acknowledge(
    role,
    wildcardResourceFinding(`<${stack.getLogicalId(fn.node.defaultChild as CfnElement)}.Arn>:*`),
    `The schedule's role may invoke ${schedule.entry} and its versions (lambda:InvokeFunction on <arn>:*, as aws-cdk-lib ` +
      'grants an invocation); no other function, no other action.',
  );
}

/**
 * The event filter that lets through only the stream records whose new image's partition key (`attribute`) begins
 * with `prefix` (TableStreamTrigger.partitionKeyPrefix): the others are dropped before any invocation, at no cost.
 */
function partitionKeyFilter(attribute: string, prefix: string): Record<string, unknown> {
  return FilterCriteria.filter({ dynamodb: { NewImage: { [attribute]: { S: FilterRule.beginsWith(prefix) } } } });
}
