/*
 * The reference point of the C API benchmark: the fastest a client can drive
 * the in-process server sequentially (one request in flight), written as a C
 * program would. One request object, reused once the core releases it; a
 * malloc allocator; the caller waits on a condition variable for the final
 * response and the release.
 *
 * usage: c_client TRITON_DIR MODEL_REPOSITORY MODEL SECONDS
 * prints one JSON line: {"requests": N, "seconds": S, "inferPerSec": R, "avgUs": U}
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "triton/core/tritonserver.h"

/* The header names its structs without typedefs in C. */
typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_ResponseAllocator TRITONSERVER_ResponseAllocator;
typedef struct TRITONSERVER_InferenceRequest TRITONSERVER_InferenceRequest;
typedef struct TRITONSERVER_InferenceResponse TRITONSERVER_InferenceResponse;
typedef struct TRITONSERVER_Server TRITONSERVER_Server;
typedef struct TRITONSERVER_ServerOptions TRITONSERVER_ServerOptions;

static void check(TRITONSERVER_Error* err, const char* what) {
  if (err == NULL) return;
  fprintf(stderr, "%s: %s\n", what, TRITONSERVER_ErrorMessage(err));
  exit(1);
}

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int responded, released;

static TRITONSERVER_Error* alloc_fn(
    TRITONSERVER_ResponseAllocator* allocator, const char* name, size_t size,
    TRITONSERVER_MemoryType type, int64_t type_id, void* userp, void** buffer,
    void** buffer_userp, TRITONSERVER_MemoryType* actual_type, int64_t* actual_id) {
  *buffer = size == 0 ? NULL : malloc(size);
  *buffer_userp = NULL;
  *actual_type = TRITONSERVER_MEMORY_CPU;
  *actual_id = 0;
  return NULL;
}

static TRITONSERVER_Error* release_fn(
    TRITONSERVER_ResponseAllocator* allocator, void* buffer, void* buffer_userp,
    size_t size, TRITONSERVER_MemoryType type, int64_t type_id) {
  free(buffer);
  return NULL;
}

static void response_fn(TRITONSERVER_InferenceResponse* response, const uint32_t flags, void* userp) {
  if (response != NULL) {
    check(TRITONSERVER_InferenceResponseError(response), "response");
    check(TRITONSERVER_InferenceResponseDelete(response), "deleting the response");
  }
  if (flags & TRITONSERVER_RESPONSE_COMPLETE_FINAL) {
    pthread_mutex_lock(&mu);
    responded = 1;
    pthread_cond_signal(&cv);
    pthread_mutex_unlock(&mu);
  }
}

static void request_release_fn(TRITONSERVER_InferenceRequest* request, const uint32_t flags, void* userp) {
  pthread_mutex_lock(&mu);
  released = 1;
  pthread_cond_signal(&cv);
  pthread_mutex_unlock(&mu);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void infer_once(TRITONSERVER_Server* server, TRITONSERVER_InferenceRequest* request) {
  responded = released = 0;
  check(TRITONSERVER_ServerInferAsync(server, request, NULL), "infer");
  pthread_mutex_lock(&mu);
  while (!responded || !released) pthread_cond_wait(&cv, &mu);
  pthread_mutex_unlock(&mu);
}

int main(int argc, char** argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s TRITON_DIR MODEL_REPOSITORY MODEL SECONDS\n", argv[0]);
    return 2;
  }
  char backends[4096];
  snprintf(backends, sizeof backends, "%s/backends", argv[1]);
  TRITONSERVER_ServerOptions* options;
  check(TRITONSERVER_ServerOptionsNew(&options), "options");
  check(TRITONSERVER_ServerOptionsSetModelRepositoryPath(options, argv[2]), "repository");
  check(TRITONSERVER_ServerOptionsSetBackendDirectory(options, backends), "backends");
  check(TRITONSERVER_ServerOptionsSetModelControlMode(options, TRITONSERVER_MODEL_CONTROL_EXPLICIT), "mode");
  check(TRITONSERVER_ServerOptionsSetLogInfo(options, 0), "log");
  TRITONSERVER_Server* server;
  check(TRITONSERVER_ServerNew(&server, options), "server");
  check(TRITONSERVER_ServerOptionsDelete(options), "options");
  check(TRITONSERVER_ServerLoadModel(server, argv[3]), "load");

  TRITONSERVER_ResponseAllocator* allocator;
  check(TRITONSERVER_ResponseAllocatorNew(&allocator, alloc_fn, release_fn, NULL), "allocator");
  TRITONSERVER_InferenceRequest* request;
  check(TRITONSERVER_InferenceRequestNew(&request, server, argv[3], -1), "request");
  float input[16] = {0};
  const int64_t shape[2] = {1, 16};
  check(TRITONSERVER_InferenceRequestAddInput(request, "INPUT0", TRITONSERVER_TYPE_FP32, shape, 2), "input");
  check(TRITONSERVER_InferenceRequestAppendInputData(request, "INPUT0", input, sizeof input, TRITONSERVER_MEMORY_CPU, 0), "data");
  check(TRITONSERVER_InferenceRequestAddRequestedOutput(request, "OUTPUT0"), "output");
  check(TRITONSERVER_InferenceRequestSetReleaseCallback(request, request_release_fn, NULL), "release");
  check(TRITONSERVER_InferenceRequestSetResponseCallback(request, allocator, NULL, response_fn, NULL), "response");

  for (int i = 0; i < 1000; i++) infer_once(server, request);
  const double seconds = atof(argv[4]);
  const double start = now_s();
  long n = 0;
  double elapsed = 0;
  while (elapsed < seconds) {
    infer_once(server, request);
    n++;
    if ((n & 255) == 0) elapsed = now_s() - start;
  }
  elapsed = now_s() - start;
  printf("{\"requests\": %ld, \"seconds\": %.3f, \"inferPerSec\": %.1f, \"avgUs\": %.2f}\n", n,
         elapsed, n / elapsed, elapsed * 1e6 / n);
  check(TRITONSERVER_InferenceRequestDelete(request), "delete request");
  check(TRITONSERVER_ResponseAllocatorDelete(allocator), "delete allocator");
  check(TRITONSERVER_ServerStop(server), "stop");
  check(TRITONSERVER_ServerDelete(server), "delete server");
  return 0;
}
