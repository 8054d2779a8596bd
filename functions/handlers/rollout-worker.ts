/** TEMPORARY placeholder so that the CDK app synthesizes on this branch; replaced by the real rollout worker. */
export const handler = async (): Promise<{ batchItemFailures: { itemIdentifier: string }[] }> => ({ batchItemFailures: [] });
