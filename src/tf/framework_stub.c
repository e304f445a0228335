/* An empty library whose soname is TensorFlow's framework library's
 * (libtensorflow_framework.so.2), linked into libkcall_tf only to record
 * that dependency: TensorFlow's C API functions are that library's, and
 * TensorFlow releases before 2.21 load it so that its symbols are not
 * global, so libkcall_tf finds them only through its own dependency. When
 * TensorFlow loads libkcall_tf, its framework library is loaded already
 * and serves; this stub is never installed or loaded. */
int kc__tf_framework_stub;
