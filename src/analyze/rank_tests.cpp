// Filled in by the diff work.
