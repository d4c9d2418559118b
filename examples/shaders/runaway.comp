#version 460
// Never ends (the host never writes the value it waits for): the watchdog must stop it.
layout(local_size_x = 1) in;
layout(std430, binding = 0) buffer Flag { uint data[]; };

void main() {
    uint spins = 0u;
    while (data[0] != 0x12345678u) {
        spins++;
    }
    data[1] = spins;
}
