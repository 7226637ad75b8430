import { describe, expect, it } from 'vitest';
import { clusterOnDisk, dataFiles } from './cluster-dir.rules.js';

describe('clusterOnDisk', () => {
  it.each([
    { files: undefined, state: 'none' },
    { files: [], state: 'none' },
    { files: ['server.lock'], state: 'none' },
    { files: ['PG_VERSION', 'global/pg_control', 'base/5/1259'], state: 'whole' },
    { files: ['PG_VERSION', 'global/pg_control', 'server.lock'], state: 'whole' },
    { files: ['pg_wal/000000010000000000000001', 'global/1213'], state: 'unfinished' },
    { files: ['PG_VERSION', 'base/1/PG_VERSION'], state: 'unfinished' },
    { files: ['global/pg_control', 'server.lock'], state: 'unfinished' },
  ])('$files → $state', ({ files, state }) => {
    expect(clusterOnDisk(files)).toBe(state);
  });
});

describe('dataFiles', () => {
  const empty = new Set(['PG_VERSION', 'global/pg_control', 'base/5/1259']);
  it.each([
    { files: [], data: [] },
    { files: ['PG_VERSION', 'global/pg_control'], data: [] },
    { files: ['PG_VERSION', 'server.lock'], data: [] },
    { files: ['PG_VERSION', 'base/5/16384', 'base/5/1259'], data: ['base/5/16384'] },
    { files: ['pg_wal/000000010000000000000002'], data: ['pg_wal/000000010000000000000002'] },
  ])('$files → $data', ({ files, data }) => {
    expect(dataFiles(files, empty)).toEqual(data);
  });
});
