// A ClickHouse cluster of its own for a test that stops its nodes (scripts/clickhouse/cluster.mjs): the layouts
// run-cluster-tests.mjs names, started here so that stopping a node disturbs no other suite.

import { rootFileUrl } from './root.js';

export interface ClusterNode {
  name: string;
  url: string;
}

export interface TestCluster {
  name: string;
  url: string;
  nodes: ClusterNode[];
  /** Kills the node (SIGKILL); the function returned starts it again and waits until it answers. */
  stopNode(node: ClusterNode): Promise<() => Promise<void>>;
  stop(): Promise<void>;
}

export async function startTestCluster(layout: '2x1' | '1x2'): Promise<TestCluster> {
  // A URL held in a variable: the harness is plain JavaScript outside the TypeScript project.
  const harness = rootFileUrl('scripts/clickhouse/cluster.mjs');
  const { startCluster, LAYOUTS } = (await import(harness)) as { startCluster(o: unknown): Promise<TestCluster>; LAYOUTS: Record<string, unknown> };
  return startCluster(LAYOUTS[layout]);
}
