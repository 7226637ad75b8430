// Who acts on a workflow when a route is called: the signed-in user, as the services take them.
import { currentUser, type UserPrincipal } from '../../platform/http/auth.js';
import type { WorkflowActor } from './workflows.types.js';

export const actorOf = (u: UserPrincipal): WorkflowActor => ({ id: u.id, name: u.name, admin: u.admin });

/** The request's signed-in user as a workflow actor. */
export const requestActor = (req: Parameters<typeof currentUser>[0]): WorkflowActor =>
  actorOf(currentUser(req));
