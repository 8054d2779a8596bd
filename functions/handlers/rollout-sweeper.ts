/** TEMPORARY placeholder so that the CDK app synthesizes on this branch; replaced by the real rollout sweeper. */
export const handler = async (): Promise<void> => {};
