from petrichor_pipeline.memory import use_system_allocator

use_system_allocator()
