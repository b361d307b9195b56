/* The C declarations of the XLA FFI structs tracejit's host callbacks use, and of the PJRT
 * FFI extension that registers their handler: `xla/ffi/api/c_api.h` and
 * `xla/pjrt/c/pjrt_c_api_ffi_extension.h` (the extension's version 3), from their
 * documentation; no header for them ships with the plugin. Read by cffi (runtime/ffi.py: so
 * plain declarations only, no preprocessor) and compiled into the C accelerator's handler
 * (csrc/accel/callbacks.c, which includes <stdint.h> and <stddef.h> first). */
typedef struct PJRT_Error PJRT_Error;
typedef struct PJRT_ExecuteContext PJRT_ExecuteContext;
typedef struct PJRT_Extension_Base {
  size_t struct_size;
  int type;
  struct PJRT_Extension_Base* next;
} PJRT_Extension_Base;

/* xla/pjrt/c/pjrt_c_api_ffi_extension.h, the extension's version 3 (typed handlers only) */
typedef struct PJRT_FFI_Type_Info {
  void (*deleter)(void* object);
  void* serialize;
  void* deserialize;
} PJRT_FFI_Type_Info;
typedef struct PJRT_FFI_Type_Register_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  const char* type_name;
  size_t type_name_size;
  int64_t type_id;
  PJRT_FFI_Type_Info* type_info;
} PJRT_FFI_Type_Register_Args;
typedef struct PJRT_FFI_UserData {
  int64_t type_id;
  void* data;
} PJRT_FFI_UserData;
typedef struct PJRT_FFI_UserData_Add_Args {
  size_t struct_size;
  PJRT_Extension_Base* extension_start;
  PJRT_ExecuteContext* context;
  PJRT_FFI_UserData user_data;
} PJRT_FFI_UserData_Add_Args;
typedef struct PJRT_FFI_Register_Handler_Args {
  size_t struct_size;
  const char* target_name;
  size_t target_name_size;
  void* handler;
  const char* platform_name;
  size_t platform_name_size;
  uint32_t traits;
} PJRT_FFI_Register_Handler_Args;
typedef struct PJRT_FFI_Extension {
  PJRT_Extension_Base base;
  PJRT_Error* (*type_register)(PJRT_FFI_Type_Register_Args* args);
  PJRT_Error* (*user_data_add)(PJRT_FFI_UserData_Add_Args* args);
  PJRT_Error* (*register_handler)(PJRT_FFI_Register_Handler_Args* args);
} PJRT_FFI_Extension;

/* xla/ffi/api/c_api.h */
typedef struct XLA_FFI_Extension_Base {
  size_t struct_size;
  int type;
  struct XLA_FFI_Extension_Base* next;
} XLA_FFI_Extension_Base;
typedef struct XLA_FFI_Api_Version {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int major_version;
  int minor_version;
} XLA_FFI_Api_Version;
typedef struct XLA_FFI_Error XLA_FFI_Error;
typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext;
typedef struct XLA_FFI_Future XLA_FFI_Future;
typedef struct XLA_FFI_Error_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const char* message;
  int errc;
} XLA_FFI_Error_Create_Args;
typedef struct XLA_FFI_Buffer {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int dtype;
  void* data;
  int64_t rank;
  int64_t* dims;
} XLA_FFI_Buffer;
typedef struct XLA_FFI_ByteSpan {
  const char* ptr;
  size_t len;
} XLA_FFI_ByteSpan;
typedef struct XLA_FFI_Scalar {
  int dtype;
  void* value;
} XLA_FFI_Scalar;
typedef struct XLA_FFI_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  int* types;
  XLA_FFI_Buffer** args;  /* void** in c_api.h: every argument we pass is a buffer */
} XLA_FFI_Args;
typedef struct XLA_FFI_Rets {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  int* types;
  XLA_FFI_Buffer** rets;  /* void** in c_api.h: every result we ask for is a buffer */
} XLA_FFI_Rets;
typedef struct XLA_FFI_Attrs {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int64_t size;
  int* types;
  XLA_FFI_ByteSpan** names;
  XLA_FFI_Scalar** attrs;  /* void** in c_api.h: read only where types[i] is SCALAR */
} XLA_FFI_Attrs;
typedef struct XLA_FFI_Api XLA_FFI_Api;
typedef struct XLA_FFI_CallFrame {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  int stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;
  XLA_FFI_Future* future;
} XLA_FFI_CallFrame;
typedef struct XLA_FFI_Metadata {
  size_t struct_size;
  XLA_FFI_Api_Version api_version;
  uint32_t traits;
} XLA_FFI_Metadata;
typedef struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base;
  XLA_FFI_Metadata* metadata;
} XLA_FFI_Metadata_Extension;
struct XLA_FFI_Api {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Api_Version api_version;
  void* internal_api;
  XLA_FFI_Error* (*XLA_FFI_Error_Create)(XLA_FFI_Error_Create_Args* args);
  void* XLA_FFI_Error_GetMessage;
  void* XLA_FFI_Error_Destroy;
  void* XLA_FFI_Handler_Register;
  void* XLA_FFI_Stream_Get;
};
