// Model of runtime/mirror/object-inl.h: the model keeps its inline functions in object.h.
#ifndef HUBBLE_ART_MODEL_MIRROR_OBJECT_INL_H_
#define HUBBLE_ART_MODEL_MIRROR_OBJECT_INL_H_

#include "mirror/object.h"

#endif  // HUBBLE_ART_MODEL_MIRROR_OBJECT_INL_H_
