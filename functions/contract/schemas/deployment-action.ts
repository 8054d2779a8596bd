/**
 * The action of a deployment request entry, in a module of its own: the rollout schemas name it, and importing it from
 * deployments.ts built every deployment schema (history, desired state…) in the rollout functions' cold start.
 */
import * as z from 'zod';

export const DeploymentAction = z.enum(['DEPLOY', 'UNDEPLOY']).meta({ id: 'DeploymentAction' });
