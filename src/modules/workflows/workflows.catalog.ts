// The stored workflow definitions, cached: a definition never changes under its id (a change
// ships as a new id), so each is read once per process.
import type { Db, Executor } from '../../platform/db/database.js';
import { notFound } from '../../platform/http/problem.js';
import type { WorkflowDefinition } from './workflows.definitions.js';
import * as repo from './workflows.repository.js';

export class DefinitionCatalog {
  private readonly byId = new Map<string, WorkflowDefinition>();

  constructor(private readonly db: Db) {}

  async list(executor: Executor = this.db): Promise<WorkflowDefinition[]> {
    const defs = await repo.listDefinitions(executor);
    for (const d of defs) this.byId.set(d.machineId, d);
    return defs;
  }

  /** A stored definition, or undefined. */
  async find(machineId: string, executor: Executor = this.db): Promise<WorkflowDefinition | undefined> {
    if (!this.byId.has(machineId)) await this.list(executor);
    return this.byId.get(machineId);
  }

  /** A stored definition; 404 when there is none. */
  async get(machineId: string): Promise<WorkflowDefinition> {
    const def = await this.find(machineId);
    if (!def) throw notFound('workflow definition');
    return def;
  }

  /** The definition an instance runs (stored before any instance of it exists). */
  async of(row: repo.InstanceRow, executor: Executor): Promise<WorkflowDefinition> {
    const def = await this.find(row.machine_id, executor);
    if (!def) throw new Error(`instance ${row.id} names no stored definition ${row.machine_id}`);
    return def;
  }
}
