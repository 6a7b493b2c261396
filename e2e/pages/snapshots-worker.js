// The worker API's side of tests/snapshots.mjs (the scenario is in snapshot-loops.js).
import { open, deleteDatabase } from '/web/src/worker.js';
import { serve } from './harness.js';
import { snapshotLoops } from './snapshot-loops.js';

serve((args) => snapshotLoops({ open, deleteDatabase }, args));
