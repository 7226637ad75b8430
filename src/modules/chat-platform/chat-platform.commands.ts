// The chat-platform commands (contract "Chat-platform commands"): each is one workflow operation,
// run through the same service method its REST route calls, with its input checked by that
// route's own schemas, as the caller: an admin's token's user, or the account the sending
// platform user is linked to. So access (404 for others, 403 for approvals), guards and conflicts
// are the REST route's, and a refusal is its problem, plus a `text` for the chat.
import type { z } from 'zod';
import { AppError, forbidden, safeParseInput, validationFailed } from '../../platform/http/problem.js';
import {
  approvalBody,
  artifactIdParam,
  evidenceBody,
  idParam,
  orchestrateBody,
  putTaskBody,
  reviewBody,
  taskIdParam,
  transitionBody,
  type WorkflowActor,
  type WorkflowRunsService,
  type WorkflowsService,
  type WorkflowTasksService,
} from '../workflows/index.js';
import {
  argumentPath,
  coerceArgs,
  commandByName,
  COMMANDS,
  operationInput,
  usage,
  type CommandDefinition,
  type CommandName,
} from './chat-platform.commands.rules.js';
import { commandText, problemText, type CommandResults } from './chat-platform.messages.rules.js';
import type { ChatPlatformService } from './chat-platform.service.js';

/** Who sends a command: a signed-in user (an admin's token), or a platform user, who acts as the
 * account linked to it (an API key with `chat-platform:command`, or the Discord adapter). */
export type CommandCaller =
  { kind: 'user'; actor: WorkflowActor } | { kind: 'platformUser'; platformUserId: string | undefined };

export interface CommandInput {
  command: string;
  args: Readonly<Record<string, unknown>>;
  channelId: string;
  guildId?: string | null | undefined;
}

export interface CommandAnswer {
  command: CommandName;
  text: string;
  result: Record<string, unknown>;
}

export interface ChatPlatformCommandsDeps {
  chatPlatform: ChatPlatformService;
  workflows: WorkflowsService;
  workflowTasks: WorkflowTasksService;
  workflowRuns: WorkflowRunsService;
  /** The account as it is now (its name and admin rights), or undefined when it is gone. */
  actorOf(userId: number): Promise<WorkflowActor | undefined>;
}

/** A command's REST operation: the route's path-parameter and body schemas, and the service call. */
interface Operation<R> {
  path: z.ZodType;
  body: z.ZodType | undefined;
  run(d: ChatPlatformCommandsDeps, actor: WorkflowActor, path: unknown, body: unknown): Promise<R>;
}

/** Pairs the schemas with the call, which receives what they parsed. */
function operation<P extends z.ZodType, B extends z.ZodType, R>(
  path: P,
  body: B | undefined,
  run: (
    d: ChatPlatformCommandsDeps,
    actor: WorkflowActor,
    path: z.output<P>,
    body: z.output<B>,
  ) => Promise<R>,
): Operation<R> {
  return { path, body, run: (d, actor, p, b) => run(d, actor, p as z.output<P>, b as z.output<B>) };
}

/** Each command's REST operation. A command carries no `expectedVersion`: it acts on the instance
 * as it is when it runs (its current version, read under the instance's row lock). */
const OPERATIONS: { [C in CommandName]: Operation<CommandResults[C]> } = {
  'observer-instance': operation(idParam, undefined, (d, actor, p) => d.workflows.get(actor, p.id)),
  'observer-transition': operation(idParam, transitionBody, (d, actor, p, body) =>
    d.workflows.transition(actor, p.id, body),
  ),
  'observer-approve': operation(idParam, approvalBody, (d, actor, p, body) =>
    d.workflows.approve(actor, p.id, body),
  ),
  'observer-evidence': operation(idParam, evidenceBody, (d, actor, p, body) =>
    d.workflows.evidence(actor, p.id, { ...body, source: 'chat_platform' }),
  ),
  'observer-artifacts': operation(idParam, undefined, async (d, actor, p) => ({
    artifacts: await d.workflowTasks.listArtifacts(actor, p.id, {}),
  })),
  'observer-assign': operation(taskIdParam, putTaskBody, (d, actor, p, body) =>
    d.workflowTasks.putTask(actor, p.taskId, body),
  ),
  'observer-artifact-view': operation(artifactIdParam, undefined, (d, actor, p) =>
    d.workflowTasks.getArtifact(actor, p.id),
  ),
  'observer-artifact-review': operation(artifactIdParam, reviewBody, (d, actor, p, body) =>
    d.workflowTasks.review(actor, p.id, body),
  ),
  'observer-orchestrate': operation(idParam, orchestrateBody, (d, actor, p, body) =>
    d.workflowRuns.orchestrate(actor, p.id, body, 'command'),
  ),
};

/** The same problem with the chat's `text` beside it (kept when it already has one). */
function withText(err: AppError, text: string): AppError {
  if (typeof err.extensions.text === 'string') return err;
  return new AppError(err.code, err.message, { ...err.extensions, text }, err.headers);
}

export class ChatPlatformCommands {
  constructor(private readonly d: ChatPlatformCommandsDeps) {}

  /** The command definitions (the endpoint's and the slash commands' one source). */
  get definitions(): readonly CommandDefinition[] {
    return COMMANDS;
  }

  /**
   * Runs a command as its caller: `{ command, text, result }`, `result` being the body the REST
   * route answers with. A refusal throws the route's problem with `text`: an unlinked or unnamed
   * platform user 403, an unknown command or bad arguments 400 (with the command's usage), then
   * whatever the operation refuses (404, 409 guard_not_satisfied…).
   */
  async run(caller: CommandCaller, input: CommandInput): Promise<CommandAnswer> {
    let def: CommandDefinition | undefined;
    try {
      const actor = await this.actorFor(caller);
      def = commandByName(input.command);
      if (!def)
        throw validationFailed(
          [{ path: 'command', message: `unknown command ${input.command}` }],
          `Unknown command ${input.command}; the commands are ${COMMANDS.map((c) => `/${c.name}`).join(', ')}`,
        );
      return await this.execute(def, actor, input.args);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      throw withText(
        err,
        problemText(err.toProblem(), err.code === 'validation_failed' && def ? usage(def) : undefined),
      );
    }
  }

  private async actorFor(caller: CommandCaller): Promise<WorkflowActor> {
    if (caller.kind === 'user') return caller.actor;
    const platformUserId = caller.platformUserId;
    if (platformUserId === undefined)
      throw forbidden('A command sent with an API key names the platform user who sent it (platformUserId)');
    const userId = await this.d.chatPlatform.linkedUserId(platformUserId);
    const actor = userId === null ? undefined : await this.d.actorOf(userId);
    if (!actor)
      throw forbidden(
        `The platform user ${platformUserId} is not linked to an account; an administrator links it first`,
      );
    return actor;
  }

  private async execute(
    def: CommandDefinition,
    actor: WorkflowActor,
    raw: Readonly<Record<string, unknown>>,
  ): Promise<CommandAnswer> {
    const coerced = coerceArgs(def, raw);
    if (!coerced.ok) throw validationFailed(coerced.errors, `The arguments of /${def.name} are not valid`);
    const { path, body } = operationInput(def, coerced.args);
    const op: Operation<unknown> = OPERATIONS[def.name];
    const parsedPath = safeParseInput(op.path, path);
    const parsedBody = op.body
      ? safeParseInput(op.body, body)
      : ({ success: true, data: undefined } as const);
    const errors = [
      ...(parsedPath.success
        ? []
        : parsedPath.errors.map((e) => ({ ...e, path: argumentPath(def, 'path', e.path) }))),
      ...(parsedBody.success
        ? []
        : parsedBody.errors.map((e) => ({ ...e, path: argumentPath(def, 'body', e.path) }))),
    ];
    if (!parsedPath.success || !parsedBody.success)
      throw validationFailed(errors, `The arguments of /${def.name} are not valid`);
    const result = await op.run(this.d, actor, parsedPath.data, parsedBody.data);
    return {
      command: def.name,
      text: commandText(def.name, result as never),
      result: result as Record<string, unknown>,
    };
  }
}
