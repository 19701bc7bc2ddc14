// Wire conversions of the values in common/underlying.h.
#pragma once

#include <kiln/underlying.h>
#include "schema/kiln.capnp.h"

namespace kiln {

void toWire(const UnderlyingSpec& spec, wire::UnderlyingSpec::Builder out);
UnderlyingSpec fromWire(wire::UnderlyingSpec::Reader in);
void toWire(const LoadFigures& load, wire::Load::Builder out);
LoadFigures fromWire(wire::Load::Reader in);
void toWire(const UnderlyingStatus& status, wire::UnderlyingStatus::Builder out);
UnderlyingStatus fromWire(wire::UnderlyingStatus::Reader in);
void toWire(const ExperimentSpec& spec, wire::ExperimentSpec::Builder out);
ExperimentSpec fromWire(wire::ExperimentSpec::Reader in);

}  // namespace kiln
