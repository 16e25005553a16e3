// The model keeps its inline functions in thread.h.
#include "thread.h"
