import type { Context } from 'aws-lambda';

/** A Lambda context for invoking a handler in a test, as a 128 MB function `test` with 30 s left. */
export function lambdaContext(awsRequestId = 'request-1'): Context {
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName: 'test',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:test',
    memoryLimitInMB: '128',
    awsRequestId,
    logGroupName: '/aws/lambda/test',
    logStreamName: 'local',
    getRemainingTimeInMillis: () => 30_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
