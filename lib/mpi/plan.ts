/** The MPI part of a run's plan: whether this process is one rank of an MPI job, and how. */

/** --enable-mpi, --mpi-library and --shard. */
export interface MpiOptions {
  /** --mpi-library: the library to load instead of Open MPI's or MPICH's. */
  library?: string;
  /** --shard: the ranks split one load, rank 0 reports; otherwise each rank profiles its own. */
  shard: boolean;
}

export interface MpiPlan {
  /** --enable-mpi: this process is one rank of an MPI job. */
  mpi?: MpiOptions;
}
