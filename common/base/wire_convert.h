// Conversions between kiln's C++ types (Value, Space, Status) and their Cap'n
// Proto wire form. Decoding validates what the schema cannot express (tensor
// shapes against element counts, enum values, depth), so a hostile message
// becomes an invalid-argument Status rather than a crash.
#pragma once

#include <kiln/space.h>
#include <kiln/status.h>
#include <kiln/value.h>
#include "schema/kiln.capnp.h"

namespace kiln {

void toWire(const Value& value, wire::Value::Builder out);
Result<Value> fromWire(wire::Value::Reader in);

void toWire(const Space& space, wire::Space::Builder out);
Result<Space> fromWire(wire::Space::Reader in);

void toWire(const Status& status, wire::Error::Builder out);
Status fromWire(wire::Error::Reader in);

wire::ErrorCode toWire(ErrorCode code);
ErrorCode fromWire(wire::ErrorCode code);

}  // namespace kiln
